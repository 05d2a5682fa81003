import { parseEnv } from './env.ts';
import { portalOtpSender, type OtpSenderKind } from './areas/portal.ts';
import { vendorSettings, type VendorSettings } from './areas/providers.ts';
import { EnvSchema, type Env } from './schema.ts';

export { ConfigError } from './env.ts';
export { EnvSchema, type Env } from './schema.ts';

/** The kinds of agent-test private platform (config.agentTestPlatform). */
export type AgentTestPlatform = 'scripted' | 'local' | 'metered';

export interface Config extends Env {
  rateLimits: Record<string, number>;
  /** REALTIME_SESSIONS_PER_DEVELOPER by tier. */
  realtimeSessionsPerDeveloper: Record<string, number>;
  /** AGENT_TESTS_IN_FLIGHT_PER_DEVELOPER by tier. */
  agentTestsInFlightPerDeveloper: Record<string, number>;
  outboundAllowlist: string[];
  s3Embedded: boolean;
  /**
   * Set only on an agent test's private platform (shared/domains/agent-tests/platform-config.ts), never from the
   * environment; null everywhere else. Every call such a platform serves is test traffic, recorded in the ledger
   * with the provider `agent-test:<provider>`. Its kind says what answers and what it costs:
   * - `scripted`: every LLM provider is answered by the run's scripted LLM (`llm.replies`); charged nothing;
   * - `local`: the agent's own local reply engine answers (no vendor at all); charged nothing;
   * - `metered`: the agent's own vendor LLM (and TTS voice) answers with the deployment's keys, charged at its real
   *   cost like any call.
   */
  agentTestPlatform: AgentTestPlatform | null;
  vendors: VendorSettings;
  /** The portal's sign-in code delivery; null: portal sign-in is off (production without a sender). */
  portalOtpSender: OtpSenderKind | null;
}

/** Parses the environment once; callers pass the result down instead of reading process.env again. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = parseEnv(EnvSchema, env);
  const byTier = (spec: string): Record<string, number> =>
    Object.fromEntries(
      spec.split(',').map((pair) => {
        const [tier, n] = pair.split(':') as [string, string];
        return [tier, Number(n)];
      }),
    );
  return {
    ...parsed,
    rateLimits: byTier(parsed.RATE_LIMITS),
    realtimeSessionsPerDeveloper: byTier(parsed.REALTIME_SESSIONS_PER_DEVELOPER),
    agentTestsInFlightPerDeveloper: byTier(parsed.AGENT_TESTS_IN_FLIGHT_PER_DEVELOPER),
    outboundAllowlist: parsed.OUTBOUND_ALLOWLIST.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    s3Embedded: !parsed.S3_ENDPOINT,
    agentTestPlatform: null,
    vendors: vendorSettings(parsed),
    portalOtpSender: portalOtpSender(parsed),
  };
}
