import type { CallReplayBody } from '../../../contracts/call-replay.ts';
import { ApiError } from '../../../kernel/errors/api-error.ts';
import { newId } from '../../../kernel/ids.ts';
import type { Infra } from '../../../platform/infra.ts';
import { getAgent } from '../../agents/db.ts';
import { getAgentVersion } from '../../agents/versions.ts';
import { insertWithinInFlightLimit, maxRunCallMs } from '../limits.ts';
import { SCRIPTABLE_LLM } from './job.ts';
import { findCall } from './recorded-call.ts';
import { insertCallReplay, type CallReplayRow } from './store.ts';

const conflict = (detail: string, param?: string) => new ApiError('conflict', { detail }, param);

/**
 * A new replay of one developer's call, after checking what can be known before it runs: the call is theirs, has
 * ended and was recorded; its agent exists and is active; the version exists. The version is fixed here: "now"
 * is the agent as it is when the replay is asked for, whatever changes while it runs. Throws ApiError.
 */
export async function newCallReplay(
  infra: Infra,
  developerId: string,
  callId: string,
  body: CallReplayBody,
): Promise<CallReplayRow> {
  const call = await findCall(infra, developerId, callId);
  if (!call) throw new ApiError('not_found', { resource: 'call', id: callId }, 'callId');
  if (call.status === 'active' || call.status === 'pending') throw conflict('The call is still going on.', 'callId');
  if (!call.recording_key) throw conflict('The call has no recording to replay (recordings were off).', 'callId');
  // A replay lasts about as long as the call did: one longer than a test run may call is refused like such a run.
  const lastedMs = call.ended_at && call.started_at ? call.ended_at.getTime() - call.started_at.getTime() : 0;
  if (lastedMs > maxRunCallMs(infra.config))
    throw new ApiError(
      'validation_failed',
      {
        detail:
          `the call lasted ${Math.ceil(lastedMs / 60_000)} minutes; a replay may take at most ` +
          `${infra.config.AGENT_TESTS_MAX_CALL_MINUTES} minutes of call time`,
      },
      'callId',
    );
  const agent = await getAgent(infra.db, developerId, call.agent_id);
  if (!agent) throw new ApiError('not_found', { resource: 'agent', id: call.agent_id }, 'callId');
  if (agent.status !== 'active')
    throw conflict(`Agent "${agent.id}" is archived; restore it with PUT {"status":"active"} to replay its calls.`);
  const v = body.version ?? agent.version;
  const version = await getAgentVersion(infra.db, developerId, agent.id, v);
  if (!version) throw new ApiError('not_found', { resource: 'agent version', id: `${agent.id}@${v}` }, 'version');
  const provider = version.config.llm_provider ?? agent.llm_provider;
  if (body.llm && !SCRIPTABLE_LLM.has(provider))
    throw conflict(
      `llm.replies are answered over the OpenAI protocol (openai, groq); version ${v} of the agent uses ${provider}.`,
      'llm',
    );
  // Counted with the developer's test runs: both play calls on the test pool (limits.ts).
  return insertWithinInFlightLimit(infra.db, infra.config, developerId, (tx) =>
    insertCallReplay(tx, {
      id: newId('callReplay'),
      developer_id: developerId,
      call_id: call.call_sid ?? call.id,
      session_id: call.id,
      agent_id: agent.id,
      agent_version_then: call.agent_version,
      agent_version_now: v,
      llm_replies: body.llm?.replies ?? null,
      variables: body.variables ?? null,
    }),
  );
}
