import { utcDayStart } from '../../shared/domains/billing/spending-caps.ts';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Waits, when the next UTC midnight is nearer than `spanMs`, until it has passed. A daily spending cap counts what
 * was spent since the UTC day began (`utcDayStart`, the platform's own), so a test that spends and then reads what is
 * left must not straddle a day's turn: after it the cap has room again, and the platform is right to spend it (a CI
 * run that started at 23:54 UTC saw a cap with room for one call dial a second one after midnight). At most once a
 * day, for at most `spanMs`.
 */
export async function clearOfUtcDayTurn(spanMs: number): Promise<void> {
  const left = utcDayStart().getTime() + DAY_MS - Date.now();
  if (left < spanMs) await new Promise((r) => setTimeout(r, left + 1000));
}
