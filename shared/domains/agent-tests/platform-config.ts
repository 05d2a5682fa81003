import type { AgentTestPlatform, Config } from '../../kernel/config/index.ts';
import { vendorEnvName, vendorSettings } from '../../kernel/config/areas/providers.ts';
import type { Scenario, TestMode } from '../../contracts/agent-tests.ts';
import { KEYED_VENDORS, LLM_PROVIDERS } from '../../contracts/providers.ts';
import type { OfflineVendors } from './offline-vendors.ts';

/**
 * The configuration of an agent test's (or a call replay's) private platform: this deployment's own (database,
 * Redis, storage, the agent as stored), listening on 127.0.0.1 only, one call at a time, no Twilio account (a test
 * never dials a number), its phone STT the run's simulated STT, and every call recorded as test traffic
 * (config.agentTestPlatform). What answers depends on the kind:
 * - `scripted` and `local` (offline): none of the deployment's vendor keys; every LLM provider resolves to the run's
 *   scripted LLM (`scripted`: shared/engines/llm/registry.ts), or the agent's local reply engine answers itself
 *   (`local`). No request can reach a paid vendor, and the calls are charged nothing.
 * - `metered`: the deployment's vendor keys stay for the agent's own LLM and TTS voice (real vendors, real cost),
 *   only the STT is the simulated one; the calls are charged like any call and marked as test traffic.
 */
export function testPlatformConfig(
  base: Config,
  vendors: OfflineVendors,
  embeddedS3Endpoint: string | null,
  kind: AgentTestPlatform,
): Config {
  const env: Record<string, unknown> = { ...base, TWILIO_ACCOUNT_SID: undefined, TWILIO_AUTH_TOKEN: undefined };
  if (kind === 'metered') {
    env.DEEPGRAM_BASE_URL = vendors.env.DEEPGRAM_BASE_URL;
    env.DEEPGRAM_API_KEY = vendors.env.DEEPGRAM_API_KEY;
  } else {
    for (const v of KEYED_VENDORS) env[vendorEnvName(v, 'API_KEY')] = env[vendorEnvName(v, 'BASE_URL')] = undefined;
    Object.assign(env, vendors.env);
  }
  const settings = vendorSettings(env);
  // Offline, whatever LLM provider the agent names, its key resolves to the scripted LLM's (the run's own server).
  if (kind !== 'metered')
    for (const provider of LLM_PROVIDERS) settings.platformKeys[provider] = vendors.env.OPENAI_API_KEY;
  return {
    ...(env as unknown as Config),
    HOST: '127.0.0.1',
    PORT: 0,
    REALTIME_PHONE_STT_PROVIDER: 'deepgram',
    // One call at a time per private platform: the run's parallelism is its number of platforms.
    REALTIME_MAX_SESSIONS: 1,
    agentTestPlatform: kind,
    ...(embeddedS3Endpoint ? { S3_ENDPOINT: embeddedS3Endpoint, s3Embedded: false } : {}),
    vendors: settings,
  };
}

/**
 * The platform a scenario runs on: with `llm.replies`, the scripted LLM; without, the agent's own LLM — offline
 * when that is the local reply engine, on the deployment's vendor (metered) otherwise.
 */
export function scenarioPlatform(scenario: Scenario, llmProvider: string): AgentTestPlatform {
  if (scenario.llm) return 'scripted';
  return llmProvider === 'local' ? 'local' : 'metered';
}

/** What a platform kind costs: `metered` is charged (as test traffic), the others are offline and free. */
export function testMode(kind: AgentTestPlatform): TestMode {
  return kind === 'metered' ? 'metered' : 'offline';
}

/** A run's mode: `metered` when any scenario runs on the agent's own vendor LLM (at real cost), else `offline`. */
export function runMode(scenarios: Scenario[], llmProvider: string): TestMode {
  return scenarios.some((s) => scenarioPlatform(s, llmProvider) === 'metered') ? 'metered' : 'offline';
}
