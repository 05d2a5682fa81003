import { getAgent } from '../../shared/domains/agents/db.ts';
import { getAgentVersion } from '../../shared/domains/agents/versions.ts';
import { findCall } from '../../shared/domains/agent-tests/replay/recorded-call.ts';
import { getCallReplay, insertCallReplay, toCallReplay } from '../../shared/domains/agent-tests/replay/store.ts';
import type { CallReplay, CallReplayBody } from '../../shared/kernel/contracts/call-replay.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { newId } from '../../shared/kernel/ids.ts';
import type { Infra } from '../../shared/platform/infra.ts';

const conflict = (detail: string, param?: string) => new ApiError('conflict', { detail }, param);

/**
 * POST /v1/calls/:callId/replay: checks what can be known now (the call is this developer's, has ended and was
 * recorded; the agent and the version exist) and queues the replay. The version is fixed here: "now" means the
 * agent as it is when the replay is asked for, whatever changes while it runs.
 */
export async function requestReplay(
  infra: Infra,
  developerId: string,
  callId: string,
  body: CallReplayBody,
): Promise<CallReplay> {
  const call = await findCall(infra, developerId, callId);
  if (!call) throw new ApiError('not_found', { resource: 'call', id: callId }, 'callId');
  if (call.status === 'active' || call.status === 'pending') throw conflict('The call is still going on.', 'callId');
  if (!call.recording_key) throw conflict('The call has no recording to replay (recordings were off).', 'callId');
  const agent = await getAgent(infra.db, developerId, call.agent_id);
  if (!agent) throw new ApiError('not_found', { resource: 'agent', id: call.agent_id }, 'callId');
  if (agent.status !== 'active')
    throw conflict(`Agent "${agent.id}" is archived; restore it with PUT {"status":"active"} to replay its calls.`);
  const version = body.version ?? agent.version;
  if (!(await getAgentVersion(infra.db, developerId, agent.id, version)))
    throw new ApiError('not_found', { resource: 'agent version', id: `${agent.id}@${version}` }, 'version');
  const row = await insertCallReplay(infra.db, {
    id: newId('callReplay'),
    developer_id: developerId,
    call_id: call.call_sid ?? call.id,
    session_id: call.id,
    agent_id: agent.id,
    agent_version_then: call.agent_version,
    agent_version_now: version,
  });
  await infra.queues.enqueue('call-replay.run', { replayId: row.id }, { jobId: row.id });
  return toCallReplay(row);
}

/** GET /v1/calls/:callId/replay/:replayId: the replay with its progress, then its diff. */
export async function getReplay(
  infra: Infra,
  developerId: string,
  callId: string,
  replayId: string,
): Promise<CallReplay> {
  const row = await getCallReplay(infra.db, developerId, replayId);
  if (!row || (row.call_id !== callId && row.session_id !== callId)) throw ApiError.notFound('call replay', replayId);
  return toCallReplay(row);
}
