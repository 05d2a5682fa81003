import { revokeKey } from '../../../kernel/db/api-keys.ts';
import { mintKey } from '../../../platform/auth/mint-key.ts';
import type { Infra } from '../../../platform/infra.ts';
import { replayDiff } from './diff.ts';
import { replayPlan } from './plan.ts';
import { loadRecordedCall, type RecordedCall } from './recorded-call.ts';
import { runReplay, type ReplayTarget, type ScriptedStt } from './run-replay.ts';
import { callReplayProgress, finishCallReplay, loadCallReplay, startCallReplay, type CallReplayRow } from './store.ts';

/**
 * A replay from the recorded call to the stored diff, on a platform given as a target (the job's own deployment,
 * or the CLI's in-process platform with simulated vendors). Progress is the caller turns played so far.
 */
export async function executeReplay(
  infra: Infra,
  row: CallReplayRow,
  call: RecordedCall,
  target: ReplayTarget,
  opts: { stt?: ScriptedStt; sttLabel?: string; llmLabel?: string; signal?: AbortSignal },
): Promise<void> {
  const plan = replayPlan(call);
  const sttLabel = opts.sttLabel ?? 'the platform’s own STT';
  const llmLabel = opts.llmLabel ?? 'the agent’s own LLM';
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
      // Unless a simulated engine was named, the replay session's own engines, as its trace recorded them.
      stt: opts.sttLabel ? null : run.engines ? `${run.engines.stt} (the agent’s STT)` : null,
      llm: opts.llmLabel ? null : run.engines ? run.engines.llmLabel : null,
    });
  } catch (e) {
    await finishCallReplay(infra.db, row.id, { status: 'failed', error: (e as Error).message });
  }
}

/**
 * The `call-replay.run` job: replays against this deployment's own api and realtime roles (AGENT_TESTS_PLATFORM_URL,
 * else PUBLIC_BASE_URL), as the call's developer with a key minted for this replay and revoked after it. The
 * agent's own engines answer (its STT and LLM as configured, metered like any call): the result names them.
 */
export async function runCallReplayJob(infra: Infra, replayId: string, signal?: AbortSignal): Promise<void> {
  const row = await loadCallReplay(infra.db, replayId);
  if (!row || row.status !== 'queued') return;
  const call = await loadRecordedCall(infra, row.developer_id, row.session_id);
  if (!call) {
    await finishCallReplay(infra.db, row.id, { status: 'failed', error: 'the recorded call no longer exists' });
    return;
  }
  const key = await mintKey(infra.db, row.developer_id, `call replay ${row.id}`, 1);
  try {
    const url = infra.config.AGENT_TESTS_PLATFORM_URL ?? infra.config.PUBLIC_BASE_URL;
    await executeReplay(
      infra,
      row,
      call,
      { url: url.replace(/\/+$/, ''), apiKey: key.key, agentId: row.agent_id, agentVersion: row.agent_version_now },
      { signal },
    );
  } finally {
    const revoked = await revokeKey(infra.db, row.developer_id, key.id, 'revoked');
    if (revoked) await infra.authenticator.invalidateKey(revoked.key_hash);
  }
}
