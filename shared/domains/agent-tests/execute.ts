import type { Config } from '../../kernel/config/index.ts';
import { vendorEnvName, vendorSettings } from '../../kernel/config/areas/providers.ts';
import type { TurnAudio } from '../../kernel/contracts/agent-tests.ts';
import { KEYED_VENDORS, LLM_PROVIDERS } from '../../kernel/contracts/providers.ts';
import { revokeKey } from '../../kernel/db/api-keys.ts';
import { withTransaction } from '../../kernel/db/pool.ts';
import { safeFetchBuffer } from '../../kernel/net/safe-fetch.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import { mintKey } from '../../platform/auth/mint-key.ts';
import type { Infra } from '../../platform/infra.ts';
import { getAgent } from '../agents/db.ts';
import { sessionCap } from '../realtime/session-claim.ts';
import { countActiveSessions } from '../realtime/sessions.ts';
import { enqueueFirstDelivery } from '../webhooks/delivery.ts';
import { insertWebhookMessage } from '../webhooks/outbox.ts';
import { startOfflineVendors, type OfflineVendors } from './offline-vendors.ts';
import { runScenario } from './run-scenario.ts';
import { finishTestRun, getTestRunById, markTestRunStarted, recordScenarioResult, type TestRunRow } from './store.ts';
import { toTestRun } from './views.ts';

export const TEST_RUN_COMPLETED_EVENT = 'agent_test.completed';

/** A private api + realtime pair on 127.0.0.1 (scripts/platform.ts starts it; the role handler passes it in). */
export type StartPrivatePlatform = (config: Config, log: Logger) => Promise<{ url: string; stop(): Promise<void> }>;

/**
 * The configuration of an offline run's private platform: this deployment's own (database, Redis, storage, the
 * agent as stored), listening on 127.0.0.1 only, with its phone STT pointed at the run's simulated STT and every
 * LLM provider answered by its scripted LLM (config.agentTestPlatform: shared/engines/llm/registry.ts). The
 * deployment's vendor keys are not in it, so no request of the run can reach a paid vendor, and it has no Twilio
 * account to dial with: a test never dials a number. Its calls are recorded as test traffic (provider
 * `agent-test:…`) and charged nothing.
 */
export function offlineConfig(
  base: Config,
  vendors: OfflineVendors,
  embeddedS3Endpoint: string | null,
  opts: { scriptedLlm: boolean } = { scriptedLlm: true },
): Config {
  const env: Record<string, unknown> = { ...base, TWILIO_ACCOUNT_SID: undefined, TWILIO_AUTH_TOKEN: undefined };
  for (const v of KEYED_VENDORS) env[vendorEnvName(v, 'API_KEY')] = env[vendorEnvName(v, 'BASE_URL')] = undefined;
  Object.assign(env, vendors.env);
  const settings = vendorSettings(env);
  // Whatever LLM provider the agent names, its key resolves to the scripted LLM's (the run's own server).
  for (const provider of LLM_PROVIDERS) settings.platformKeys[provider] = vendors.env.OPENAI_API_KEY;
  return {
    ...(env as unknown as Config),
    HOST: '127.0.0.1',
    PORT: 0,
    REALTIME_PHONE_STT_PROVIDER: 'deepgram',
    // One call at a time per private platform: the run's parallelism is its number of platforms.
    REALTIME_MAX_SESSIONS: 1,
    // Its calls are test traffic: recorded as such in the ledger, charged nothing; its LLM is the scripted one.
    agentTestPlatform: true,
    agentTestScriptedLlm: opts.scriptedLlm,
    ...(embeddedS3Endpoint ? { S3_ENDPOINT: embeddedS3Endpoint, s3Embedded: false } : {}),
    vendors: settings,
  };
}

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
    if (audio.key) {
      // Keys are laid out under the developer's id (objectKey): another tenant's object is not theirs to read.
      if (!audio.key.startsWith(`${developerId}/`)) throw new Error(`audio.key ${audio.key} is not one of yours`);
      return infra.storage.getBuffer(audio.key);
    }
    throw new Error('audio.file names a file on the machine that runs the CLI; give a url or key over the API');
  };
}

/**
 * Runs a test run's unfinished scenarios (`agent-tests.run`): up to AGENT_TESTS_MAX_PARALLEL private platforms,
 * each with its own simulated STT and scripted LLM, each taking the next scenario until none is left. Every result
 * is stored as it finishes (progress), so a retried attempt resumes after the last one. The calls are made with a
 * short-lived key of the agent's developer, revoked at the end: they are that developer's sessions, on the call
 * pages like any other.
 */
export async function executeTestRun(
  infra: Infra,
  runId: string,
  deps: { startPlatform: StartPrivatePlatform; signal: AbortSignal; log: Logger; progress?: (f: number) => void },
): Promise<void> {
  const run = await getTestRunById(infra.db, runId);
  if (!run || (run.status !== 'queued' && run.status !== 'running')) return;
  await markTestRunStarted(infra.db, runId);
  let error: string | null = null;
  try {
    const agent = await getAgent(infra.db, run.developer_id, run.agent_id);
    if (!agent) throw new Error(`the agent ${run.agent_id} no longer exists`);
    await runPending(infra, run, deps);
    if (deps.signal.aborted) throw new Error('the run was interrupted; its next attempt resumes it');
  } catch (e) {
    if (deps.signal.aborted) throw e;
    error = (e as Error).message;
    deps.log.warn({ err: e, runId }, 'agent test run failed');
  }
  await finishTestRunWithWebhook(infra, runId, error);
}

async function runPending(
  infra: Infra,
  run: TestRunRow,
  deps: { startPlatform: StartPrivatePlatform; signal: AbortSignal; log: Logger; progress?: (f: number) => void },
): Promise<void> {
  const pending = run.results.flatMap((r, i) => (r === null ? [i] : []));
  if (pending.length === 0) return;
  // No more calls at once than the developer's tier lets them run beside the calls they have now (a scenario
  // whose call is refused waits for a slot: run-scenario.ts), and no more than this worker is sized for.
  const free = (await sessionCap(infra, run.developer_id)) - (await countActiveSessions(infra.db, run.developer_id));
  const slots = Math.max(1, Math.min(infra.config.AGENT_TESTS_MAX_PARALLEL, pending.length, free));
  const key = await mintKey(infra.db, run.developer_id, `agent-tests ${run.id}`, 1);
  const loadAudio = restAudioLoader(infra, run.developer_id, deps.signal);
  let done = run.done;
  const slot = async () => {
    const vendors = await startOfflineVendors();
    let platform: { url: string; stop(): Promise<void> } | null = null;
    try {
      const config = offlineConfig(infra.config, vendors, infra.embeddedS3?.endpoint ?? null);
      platform = await deps.startPlatform(config, deps.log.child({ agentTestRun: run.id }));
      for (let i = pending.shift(); i !== undefined && !deps.signal.aborted; i = pending.shift()) {
        const result = await runScenario(
          {
            url: platform.url,
            apiKey: key.key,
            agentId: run.agent_id,
            ...(run.version ? { agentVersion: run.version } : {}),
          },
          run.scenarios[i]!,
          vendors,
          { file: `scenarios[${i}]`, signal: deps.signal, loadAudio },
        );
        // A scenario cut short by the job's end (a timeout, the worker draining) is not its result: the job's next
        // attempt plays it again.
        if (deps.signal.aborted) break;
        await recordScenarioResult(infra.db, run.id, i, result);
        deps.progress?.(++done / run.total);
      }
    } finally {
      await platform?.stop();
      await vendors.close();
    }
  };
  try {
    await Promise.all(Array.from({ length: slots }, slot));
  } finally {
    await revokeKey(infra.db, run.developer_id, key.id, 'revoked');
  }
}

/** Ends the run and, in the same transaction, records its `agent_test.completed` webhook (when one was asked). */
export async function finishTestRunWithWebhook(infra: Infra, runId: string, error: string | null): Promise<void> {
  const messageId = await withTransaction(infra.db, async (tx) => {
    const row = await finishTestRun(tx, runId, error);
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
}
