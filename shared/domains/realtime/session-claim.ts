import { getDeveloper } from '../../kernel/db/developers.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { Infra } from '../../platform/infra.ts';
import { admitSession, countActiveSessions, type Admission } from './sessions.ts';

/**
 * WebSocket close codes of the session sockets beyond the standard ones (1000 normal, 1003 binary on Twilio,
 * 1007 bad frame, 1008 bad credentials, 1011 could not start), documented in docs/realtime.md. 4xxx is the range
 * RFC 6455 leaves to applications; the last three digits echo the HTTP status of the same refusal.
 */
export const CLOSE = {
  /** The session token was used already (one socket per token), or its session expired unclaimed. */
  tokenUsed: 4409,
  /** The developer already runs as many sessions as the tier allows (REALTIME_SESSIONS_PER_DEVELOPER). */
  sessionLimit: 4429,
  /** No authentication within REALTIME_AUTH_TIMEOUT_MS, or nothing received for REALTIME_IDLE_TIMEOUT_SECONDS. */
  timeout: 4408,
} as const;

/** The developer's cap on running realtime sessions, from their tier. */
export async function sessionCap(infra: Infra, developerId: string, tier?: string): Promise<number> {
  const caps = infra.config.realtimeSessionsPerDeveloper;
  const t = tier ?? (await getDeveloper(infra.db, developerId))?.tier ?? 'starter';
  return caps[t] ?? caps.starter ?? 5;
}

/** 429 `concurrent_sessions_limited` at creation, while the developer's server can still answer the call itself. */
export async function requireSessionSlot(infra: Infra, developerId: string, tier?: string): Promise<void> {
  const limit = await sessionCap(infra, developerId, tier);
  if ((await countActiveSessions(infra.db, developerId)) >= limit) {
    throw new ApiError('concurrent_sessions_limited', { limit });
  }
}

/** Admits a socket's session (single-use claim of its token's session, under the developer's cap). */
export async function admitRealtimeSession(
  infra: Infra,
  a: Omit<Admission, 'maxActive'> & { tier?: string },
): Promise<'admitted' | 'used' | 'limit'> {
  return admitSession(infra.db, { ...a, maxActive: await sessionCap(infra, a.developerId, a.tier) });
}
