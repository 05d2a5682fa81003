import type { Config } from '../../kernel/config/index.ts';
import type { Db, Queryable } from '../../kernel/db/pool.ts';
import { accountLimit, ensureAccount, selectAccount } from '../../platform/metering/accounts.ts';
import { dailyHeadroom } from './spending-caps.ts';

/** Why money stops a call before it starts: the daily spending cap (developer or key) or the balance. */
export type FundingBlock = 'daily_cap' | 'balance';

/** What the developer can spend now: the balance (Infinity on a tier with an overage rate) and today's cap room. */
export interface Funding {
  balance: number;
  daily: { remaining: number; cap: number; scope: 'developer' | 'key' } | null;
}

export async function readFunding(
  db: Db,
  config: Config,
  developerId: string,
  apiKeyId: string | null,
  now = new Date(),
  q?: Queryable,
): Promise<Funding> {
  // On a caller's transaction (`q`) the account is read there; the pool is used only when its period must roll
  // over first (once a month), which takes a transaction of its own.
  const current = q ? await selectAccount(q, developerId) : null;
  const a = current && current.period_end > now ? current : await ensureAccount(db, config, developerId, now);
  const balance = a.overage_rate > 0 ? Infinity : Math.max(0, accountLimit(a) - a.used);
  const d = await dailyHeadroom(q ?? db, developerId, apiKeyId, now);
  return { balance, daily: d ? { ...d, remaining: Math.max(0, d.remaining) } : null };
}

/** Credits the developer can spend now: the tighter of the balance and today's cap. */
export function spendable(f: Funding): number {
  return Math.min(f.balance, f.daily?.remaining ?? Infinity);
}

/** What blocks spending `credits` now (the cap first: it is the one that rolls over by itself), or null. */
export function fundingBlock(f: Funding, credits: number): FundingBlock | null {
  if (f.daily && f.daily.remaining < credits) return 'daily_cap';
  if (f.balance < credits) return 'balance';
  return null;
}

/** How many calls of `perCall` credits each the developer can fund now. */
export function fundableCalls(f: Funding, perCall: number): number {
  const n = spendable(f) / Math.max(1, perCall);
  return Number.isFinite(n) ? Math.floor(n) : Number.MAX_SAFE_INTEGER;
}
