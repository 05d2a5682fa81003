import type { ScriptedLlm } from '../../../contracts/agent-tests.ts';
import { revokeKey } from '../../../kernel/db/api-keys.ts';
import type { Logger } from '../../../kernel/observability/logger.ts';
import { mintKey } from '../../../platform/auth/mint-key.ts';
import type { Infra } from '../../../platform/infra.ts';
import { getAgentVersion } from '../../agents/versions.ts';
import type { StartPrivatePlatform } from '../execute.ts';
import { SCRIPTED_LLM_LABEL, startOfflineVendors } from '../offline-vendors.ts';
import { testPlatformConfig } from '../platform-config.ts';
import { replayDiff } from './diff.ts';
import { replayPlan } from './plan.ts';
import { loadRecordedCall, type RecordedCall } from './recorded-call.ts';
import { runReplay, type ReplayTarget, type ScriptedStt } from './run-replay.ts';
import { callReplayProgress, finishCallReplay, loadCallReplay, startCallReplay, type CallReplayRow } from './store.ts';

/** What transcribes a replay, in its result: the simulated STT cannot hear the audio, it is told what was heard. */
export const REPLAY_STT_LABEL =
  'simulated (the recorded call’s transcript on the replayed audio’s clock, Deepgram-protocol simulator)';

/** LLM providers the scripted LLM answers for (it speaks the OpenAI Chat Completions protocol). */
export const SCRIPTABLE_LLM = new Set(['openai', 'groq']);

/**
 * A replay from the recorded call to the stored diff, on a platform given as a target. Progress is the caller
 * turns played so far. The engines' labels: the simulated STT's and the scripted LLM's when they answered, else
 * the replay session's own as its trace recorded them.
 */
export async function executeReplay(
  infra: Infra,
  row: CallReplayRow,
  call: RecordedCall,
  target: ReplayTarget,
  opts: { stt?: ScriptedStt; sttLabel?: string; llmLabel?: string; signal?: AbortSignal },
): Promise<void> {
  const plan = replayPlan(call);
  const sttLabel = opts.sttLabel ?? 'the agent’s STT';
  const llmLabel = opts.llmLabel ?? 'the agent’s LLM';
  if (!(await startCallReplay(infra.db, row.id, { turnsTotal: plan.turns.length, stt: sttLabel, llm: llmLabel })))
    return;
  try {
    const run = await runReplay(target, plan, {
      stt: opts.stt,
      signal: opts.signal,
      onTurn: (done) => callReplayProgress(infra.db, row.id, done),
    });
    const diff = replayDiff(call.turns, run.turns, plan);
    await finishCallReplay(infra.db, row.id, {
      status: run.error ? 'failed' : 'completed',
      turns: diff.turns,
      summary: diff.summary,
      replaySessionId: run.sessionId,
      error: run.error,
      stt: opts.sttLabel ? null : run.engines ? run.engines.stt : null,
      llm: opts.llmLabel ? null : run.engines ? run.engines.llmLabel : null,
    });
  } catch (e) {
    await finishCallReplay(infra.db, row.id, { status: 'failed', error: (e as Error).message });
  }
}

/**
 * Replays on a private api + realtime pair (the `call-replay.run` job and the CLI): the simulated STT hears the
 * call's transcript, the agent (the version named) answers, the caller is this process. The calls are made with
 * a one-day key of the call's developer, revoked after: the replay is that developer's session, on the call pages.
 */
export async function replayOnPrivatePlatform(
  infra: Infra,
  row: CallReplayRow,
  deps: { startPlatform: StartPrivatePlatform; log: Logger; signal?: AbortSignal },
): Promise<void> {
  const call = await loadRecordedCall(infra, row.developer_id, row.session_id);
  if (!call) {
    await finishCallReplay(infra.db, row.id, { status: 'failed', error: 'the recorded call no longer exists' });
    return;
  }
  const version = await getAgentVersion(infra.db, row.developer_id, row.agent_id, row.agent_version_now);
  const provider = version?.config.llm_provider;
  const replies = row.llm_replies;
  // The private platform's kind (platform-config.ts): scripted replies or the local reply engine offline and free,
  // else the agent's own vendor LLM with the deployment's keys, metered like any call and marked as test traffic.
  const kind = replies !== null ? 'scripted' : provider === 'local' ? 'local' : 'metered';
  const vendors = await startOfflineVendors();
  let platform: { url: string; stop(): Promise<void> } | null = null;
  const key = await mintKey(infra.db, row.developer_id, `call replay ${row.id}`, 1);
  try {
    const config = testPlatformConfig(infra.config, vendors, infra.embeddedS3?.endpoint ?? null, kind);
    platform = await deps.startPlatform(config, deps.log.child({ callReplay: row.id }));
    const llm: ScriptedLlm | undefined = replies ? { replies } : undefined;
    await executeReplay(
      infra,
      row,
      call,
      {
        url: platform.url,
        apiKey: key.key,
        agentId: row.agent_id,
        agentVersion: row.agent_version_now,
        ...(row.variables ? { variables: row.variables } : {}),
      },
      {
        stt: {
          use: (lines) =>
            vendors.use({ name: 'replay', transport: 'twilio', callerVoice: 'kal', llm, turns: [] }, lines),
        },
        sttLabel: REPLAY_STT_LABEL,
        ...(llm ? { llmLabel: SCRIPTED_LLM_LABEL } : {}),
        signal: deps.signal,
      },
    );
  } finally {
    await platform?.stop();
    await vendors.close();
    const revoked = await revokeKey(infra.db, row.developer_id, key.id, 'revoked');
    if (revoked) await infra.authenticator.invalidateKey(revoked.key_hash);
  }
}

/** The `call-replay.run` job (not retried: a second attempt would place a second call). */
export async function runCallReplayJob(
  infra: Infra,
  replayId: string,
  deps: { startPlatform: StartPrivatePlatform; log: Logger; signal?: AbortSignal },
): Promise<void> {
  const row = await loadCallReplay(infra.db, replayId);
  if (!row || row.status !== 'queued') return;
  await replayOnPrivatePlatform(infra, row, deps);
}
