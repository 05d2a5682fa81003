/**
 * Standard Webhooks retry schedule: the delay before attempt n+1 after attempt n failed (attempt 1 is
 * immediate). Ten attempts in all over about three days; `scale` shrinks it for tests (WEBHOOK_RETRY_SCALE).
 */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  14 * 3600_000,
  20 * 3600_000,
  24 * 3600_000,
] as const;

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Delay before the given attempt (2…10), or null when no attempt is left. */
export function delayBeforeAttempt(attempt: number, scale = 1): number | null {
  const d = RETRY_DELAYS_MS[attempt - 2];
  return d === undefined ? null : Math.max(1, Math.round(d * scale));
}
