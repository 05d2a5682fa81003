import type { Config } from '../../kernel/config/index.ts';
import type { TurnAudio } from '../../contracts/agent-tests.ts';
import { revokeKey } from '../../kernel/db/api-keys.ts';
import { withTransaction } from '../../kernel/db/pool.ts';
import { safeFetchBuffer } from '../../kernel/net/safe-fetch.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import { mintKey } from '../../platform/auth/mint-key.ts';
import type { Infra } from '../../platform/infra.ts';
import { getAgent } from '../agents/db.ts';
import { agentLanguageModelNow } from '../agents/language-model.ts';
import { agentAtVersion, getAgentVersion } from '../agents/versions.ts';
import { sessionCap } from '../realtime/session-claim.ts';
import { countActiveSessions } from '../realtime/sessions.ts';
import { enqueueFirstDelivery } from '../webhooks/delivery.ts';
import { insertWebhookMessage } from '../webhooks/outbox.ts';
import { readOwnObject } from './audio-key.ts';
import { refundAbandonedCalls, runKeyName } from './abandoned-calls.ts';
import { CallTimeBudget } from './call-time-budget.ts';
import { maxRunCallMs } from './limits.ts';
import { runMode, scenarioPlatform } from './platform-config.ts';
import { agentLlmProvider, PlatformSlot } from './platform-slot.ts';
import { runScenario } from './run-scenario.ts';
import { finishTestRun, getTestRunById, markTestRunStarted, recordScenarioResult, type TestRunRow } from './store.ts';
import { toTestRun } from './views.ts';

export const TEST_RUN_COMPLETED_EVENT = 'agent_test.completed';

/** A private api + realtime pair on 127.0.0.1 (scripts/platform.ts starts it; the role handler passes it in). */
export type StartPrivatePlatform = (config: Config, log: Logger) => Promise<{ url: string; stop(): Promise<void> }>;

/** Reads an audio turn's bytes for a REST run: an https URL (SSRF-safe) or an object of the developer's own. */
export function restAudioLoader(infra: Infra, developerId: string, signal?: AbortSignal) {
  return async (audio: TurnAudio): Promise<Buffer> => {
    if (audio.url) {
      const { buf } = await safeFetchBuffer(audio.url, {
        policy: infra.addressPolicy,
        maxBytes: infra.config.OUTBOUND_MAX_BYTES,
        timeoutMs: infra.config.OUTBOUND_TIMEOUT_MS,
        signal,
        param: 'audio.url',
      });
      return buf;
    }
    // Keys are laid out under the developer's id (objectKey): another tenant's object is not theirs to read.
    if (audio.key) return readOwnObject(infra.storage, developerId, audio.key);
    throw new Error('audio.file names a file on the machine that runs the CLI; give a url or key over the API');
  };
}

/**
 * Runs a test run's unfinished scenarios (`agent-tests.run`): up to AGENT_TESTS_MAX_PARALLEL slots, each with its
 * own simulated STT and scripted LLM and a private platform of the kind the scenario needs (platform-slot.ts), each
 * taking the next scenario until none is left. Every result is stored as it finishes (progress), so a retried
 * attempt resumes after the last one. The calls are made with a short-lived key of the agent's developer, revoked
 * at the end: they are that developer's sessions, on the call pages like any other.
 */
export async function executeTestRun(
  infra: Infra,
  runId: string,
  deps: { startPlatform: StartPrivatePlatform; signal: AbortSignal; log: Logger; progress?: (f: number) => void },
): Promise<void> {
  const run = await getTestRunById(infra.db, runId);
  if (!run || (run.status !== 'queued' && run.status !== 'running')) return;
  let error: string | null = null;
  try {
    const provider = await agentLlmProvider(infra.db, run.developer_id, run.agent_id, run.version);
    await markTestRunStarted(infra.db, runId, provider === null ? run.mode : runMode(run.scenarios, provider));
    if (provider === null) throw new Error(`the agent ${run.agent_id} no longer exists`);
    await runPending(infra, run, provider, deps);
    if (deps.signal.aborted) throw new Error('the run was interrupted; its next attempt resumes it');
  } catch (e) {
    if (deps.signal.aborted) throw e;
    error = (e as Error).message;
    deps.log.warn({ err: e, runId }, 'agent test run failed');
  }
  await finishTestRunWithWebhook(infra, runId, error);
}

/**
 * Builds the agent's language model before the calls (a real call would find it built by the agent's save), so
 * that every scenario on the local STT hears with the model the agent's calls use. A failure is logged and the
 * calls go on with the general model.
 */
async function buildAgentLanguageModel(
  infra: Infra,
  run: TestRunRow,
  deps: { signal: AbortSignal; log: Logger },
): Promise<void> {
  if (!infra.config.SPEECH_LM_AUTO_BUILD) return;
  try {
    const current = await getAgent(infra.db, run.developer_id, run.agent_id);
    if (!current) return;
    const v = run.version ? await getAgentVersion(infra.db, run.developer_id, run.agent_id, run.version) : null;
    await agentLanguageModelNow(infra, v ? agentAtVersion(current, v) : current, deps.signal);
  } catch (e) {
    if (deps.signal.aborted) throw e;
    deps.log.warn(
      { err: (e as Error).message, runId: run.id },
      'agent language model: not built, tests use the general model',
    );
  }
}

async function runPending(
  infra: Infra,
  run: TestRunRow,
  llmProvider: string,
  deps: { startPlatform: StartPrivatePlatform; signal: AbortSignal; log: Logger; progress?: (f: number) => void },
): Promise<void> {
  // Scenarios of one platform kind together, so a slot restarts its platform as seldom as it can (results are
  // stored at their own index whatever the order).
  const kindOf = (i: number) => scenarioPlatform(run.scenarios[i]!, llmProvider);
  const order = ['scripted', 'local', 'metered'];
  const pending = run.results
    .flatMap((r, i) => (r === null ? [i] : []))
    .sort((a, b) => order.indexOf(kindOf(a)) - order.indexOf(kindOf(b)) || a - b);
  if (pending.length === 0) return;
  await buildAgentLanguageModel(infra, run, deps);
  // No more calls at once than the developer's tier lets them run beside the calls they have now (a scenario
  // whose call is refused waits for a slot: session-api.ts), and no more than this worker is sized for.
  const free = (await sessionCap(infra, run.developer_id)) - (await countActiveSessions(infra.db, run.developer_id));
  const slots = Math.max(1, Math.min(infra.config.AGENT_TESTS_MAX_PARALLEL, pending.length, free));
  const key = await mintKey(infra.db, run.developer_id, runKeyName(run.id), 1);
  const loadAudio = restAudioLoader(infra, run.developer_id, deps.signal);
  const log = deps.log.child({ agentTestRun: run.id });
  let done = run.done;
  // The run's calls so far (an earlier attempt's results included) count against its cap; past it, the calls in
  // progress hang up and the run ends as error, its finished results kept.
  const budget = new CallTimeBudget(
    maxRunCallMs(infra.config),
    run.results.reduce((n, r) => n + (r?.durationMs ?? 0), 0),
  );
  const signal = AbortSignal.any([deps.signal, budget.signal]);
  const slot = async () => {
    const platforms = await PlatformSlot.open(
      (config) => deps.startPlatform(config, log),
      infra.config,
      infra.embeddedS3?.endpoint ?? null,
    );
    try {
      for (let i = pending.shift(); i !== undefined && !signal.aborted; i = pending.shift()) {
        const on = await platforms.platform(kindOf(i));
        const callEnded = budget.start();
        const result = await runScenario(
          {
            url: on.url,
            apiKey: key.key,
            agentId: run.agent_id,
            ...(run.version ? { agentVersion: run.version } : {}),
          },
          run.scenarios[i]!,
          on,
          { file: `scenarios[${i}]`, signal, loadAudio },
        ).finally(callEnded);
        // A scenario cut short by the job's end (a timeout, the worker draining) is not its result: the job's next
        // attempt plays it again. One cut short by the call-time cap is not played again: the run ends.
        if (signal.aborted) break;
        await recordScenarioResult(infra.db, run.id, i, result);
        deps.progress?.(++done / run.total);
      }
    } finally {
      await platforms.close();
    }
  };
  try {
    await Promise.all(Array.from({ length: slots }, slot));
  } finally {
    budget.close();
    await revokeKey(infra.db, run.developer_id, key.id, 'revoked');
  }
  if (budget.exceeded && !deps.signal.aborted)
    throw new Error(
      `the run's calls passed its cap of ${infra.config.AGENT_TESTS_MAX_CALL_MINUTES} minutes of call time; ` +
        'the scenarios not finished were not played (split them into several runs)',
    );
}

/**
 * Ends the run and, in the same transaction, records its `agent_test.completed` webhook (when one was asked); then
 * refunds the calls of its dead attempts (abandoned-calls.ts), so it is charged what its results say.
 */
export async function finishTestRunWithWebhook(infra: Infra, runId: string, error: string | null): Promise<void> {
  let finished: TestRunRow | null = null;
  const messageId = await withTransaction(infra.db, async (tx) => {
    const row = (finished = await finishTestRun(tx, runId, error));
    if (!row?.webhook_url) return null;
    return insertWebhookMessage(tx, {
      developerId: row.developer_id,
      url: row.webhook_url,
      source: `agent_test_run:${row.id}`,
      type: TEST_RUN_COMPLETED_EVENT,
      data: toTestRun(row),
    });
  });
  if (messageId) await enqueueFirstDelivery(infra, messageId);
  // The run has ended either way; a refund that failed is logged (its ledger entries say what to give back).
  if (finished)
    await refundAbandonedCalls(infra, finished).catch((e: Error) =>
      infra.log.error({ agentTestRun: runId, err: e.message }, 'refunding the calls of dead attempts failed'),
    );
}
