import { parseEnv } from './env.ts';
import { portalOtpSender, type OtpSenderKind } from './areas/portal.ts';
import { vendorSettings, type VendorSettings } from './areas/providers.ts';
import { EnvSchema, type Env } from './schema.ts';

export { ConfigError } from './env.ts';
export { EnvSchema, type Env } from './schema.ts';

export interface Config extends Env {
  rateLimits: Record<string, number>;
  /** REALTIME_SESSIONS_PER_DEVELOPER by tier. */
  realtimeSessionsPerDeveloper: Record<string, number>;
  outboundAllowlist: string[];
  s3Embedded: boolean;
  /**
   * Set only on an agent test run's private platform (shared/domains/agent-tests/execute.ts), never from the
   * environment: every call it serves is offline test traffic, recorded in the ledger as such and not charged.
   */
  agentTestPlatform: boolean;
  /**
   * On such a platform, every LLM provider is answered by the run's scripted LLM (agent test runs, replays with
   * scripted replies). Unset for a replay of a local-reply-engine agent, which answers with that engine itself.
   */
  agentTestScriptedLlm?: boolean;
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
    outboundAllowlist: parsed.OUTBOUND_ALLOWLIST.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    s3Embedded: !parsed.S3_ENDPOINT,
    agentTestPlatform: false,
    vendors: vendorSettings(parsed),
    portalOtpSender: portalOtpSender(parsed),
  };
}
