import type { Config } from '../config/index.ts';
import { withTransaction, type Db, type Queryable } from '../db/pool.ts';
import { ApiError } from '../errors/api-error.ts';
import { newId } from '../ids.ts';
import { planFor, type Tier } from './tiers.ts';

/** A developer's credit balance for the current period. */
export interface AccountRow {
  developer_id: string;
  cycle_anchor: Date;
  period_index: number;
  period_start: Date;
  period_end: Date;
  monthly_credits: number;
  carryover_credits: number;
  overage_rate: number;
  carryover_months: number;
  used: number;
  rev: number;
}

export const ACCOUNT_COLUMNS =
  'developer_id, cycle_anchor, period_index, period_start, period_end, monthly_credits, carryover_credits, ' +
  'overage_rate, carryover_months, used, rev';

export function accountLimit(a: Pick<AccountRow, 'monthly_credits' | 'carryover_credits'>): number {
  return a.monthly_credits + a.carryover_credits;
}

/** `anchor + n` calendar months, the day clamped to the month's length (Jan 31 + 1 month = Feb 28/29). */
export function addMonthsUtc(anchor: Date, n: number): Date {
  const y = anchor.getUTCFullYear();
  const m = anchor.getUTCMonth() + n;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  const d = new Date(anchor.getTime());
  d.setUTCDate(1);
  d.setUTCFullYear(y, m, Math.min(anchor.getUTCDate(), lastDay));
  return d;
}

/** USD cents for credits past the limit at a rate in USD per 1,000 credits (rounded to the nearest cent). */
export function overageCents(credits: number, ratePerThousand: number): number {
  return Math.round((credits * ratePerThousand * 100) / 1000);
}

export async function selectAccount(db: Queryable, developerId: string): Promise<AccountRow | null> {
  const { rows } = await db.query<AccountRow>(
    `select ${ACCOUNT_COLUMNS} from credit_accounts where developer_id = $1`,
    [developerId],
  );
  return rows[0] ?? null;
}

/**
 * The developer's account for the current period: created on first use from the developer's tier, and rolled
 * over (lazily, here) when its period has ended. Rollover applies carry-over: the unused credits of the ending
 * period carry into the next, capped at carryoverMonths × monthlyCredits; `used` starts again at 0. Several
 * ended periods (an idle account) roll one by one, so carry-over decays as it would have month by month.
 */
export async function ensureAccount(
  db: Db,
  config: Config,
  developerId: string,
  now = new Date(),
): Promise<AccountRow> {
  const current = await selectAccount(db, developerId);
  if (current && current.period_end > now) return current;
  return withTransaction(db, async (tx) => {
    const { rows: devs } = await tx.query<{ tier: string }>('select tier from developers where id = $1', [developerId]);
    const dev = devs[0];
    if (!dev) throw new ApiError('not_found', { resource: 'developer', id: developerId }, null);
    const plan = planFor(config, dev.tier);
    await tx.query(
      `insert into credit_accounts (developer_id, cycle_anchor, period_index, period_start, period_end,
                                    monthly_credits, overage_rate, carryover_months)
       values ($1, $2, 0, $2, $3, $4, $5, $6) on conflict (developer_id) do nothing`,
      [developerId, now, addMonthsUtc(now, 1), plan.monthlyCredits, plan.overageRate, plan.carryoverMonths],
    );
    const { rows } = await tx.query<AccountRow>(
      `select ${ACCOUNT_COLUMNS} from credit_accounts where developer_id = $1 for update`,
      [developerId],
    );
    const a = rows[0]!;
    if (a.period_end > now) return a;

    const over = a.used - accountLimit(a);
    if (over > 0 && a.overage_rate > 0) {
      await tx.query(
        `insert into overage_charges (id, developer_id, period_start, period_end, credits, rate, amount_cents)
         values ($1, $2, $3, $4, $5, $6, $7) on conflict (developer_id, period_start) do nothing`,
        [
          newId('ledger'),
          developerId,
          a.period_start,
          a.period_end,
          over,
          a.overage_rate,
          overageCents(over, a.overage_rate),
        ],
      );
    }
    let { period_index: index, period_end: end, used, monthly_credits: monthly, carryover_credits: carry } = a;
    while (end <= now) {
      const unused = Math.max(0, monthly + carry - used);
      carry = Math.min(unused, plan.monthlyCredits * plan.carryoverMonths);
      monthly = plan.monthlyCredits;
      used = 0;
      index += 1;
      end = addMonthsUtc(a.cycle_anchor, index + 1);
    }
    const { rows: rolled } = await tx.query<AccountRow>(
      `update credit_accounts
          set period_index = $2, period_start = $3, period_end = $4, monthly_credits = $5, carryover_credits = $6,
              overage_rate = $7, carryover_months = $8, used = 0, rev = rev + 1, updated_at = now()
        where developer_id = $1
        returning ${ACCOUNT_COLUMNS}`,
      [
        developerId,
        index,
        addMonthsUtc(a.cycle_anchor, index),
        end,
        monthly,
        carry,
        plan.overageRate,
        plan.carryoverMonths,
      ],
    );
    return rolled[0]!;
  });
}

/**
 * Moves a developer to a tier: the developers row (read by rate limiting and auth) and the account's plan, which
 * takes effect at once (the new monthly credits replace the old within the current period; used stays). Runs on
 * the caller's transaction. Returns the updated account (null when none exists yet: it is created from the new
 * tier on first use); the caller invalidates the auth cache and publishes the balance after commit.
 */
export async function applyTier(
  q: Queryable,
  config: Config,
  developerId: string,
  tier: Tier,
): Promise<AccountRow | null> {
  const plan = planFor(config, tier);
  await q.query('update developers set tier = $2 where id = $1', [developerId, tier]);
  const { rows } = await q.query<AccountRow>(
    `update credit_accounts
        set monthly_credits = $2, overage_rate = $3, carryover_months = $4, rev = rev + 1, updated_at = now()
      where developer_id = $1
      returning ${ACCOUNT_COLUMNS}`,
    [developerId, plan.monthlyCredits, plan.overageRate, plan.carryoverMonths],
  );
  return rows[0] ?? null;
}
