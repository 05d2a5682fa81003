import type { Config } from '../../kernel/config/index.ts';
import { withTransaction, type Db, type Queryable } from '../../kernel/db/pool.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { newId } from '../../kernel/ids.ts';
import { planFor, type Tier, type TierPlan } from './tiers.ts';

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
  /** The newest Stripe subscription period applied (see stripe-periods.ts); null without a subscription. */
  stripe_period_start: Date | null;
  stripe_period_end: Date | null;
}

export const ACCOUNT_COLUMNS =
  'developer_id, cycle_anchor, period_index, period_start, period_end, monthly_credits, carryover_credits, ' +
  'overage_rate, carryover_months, used, rev, stripe_period_start, stripe_period_end';

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

/** The plan of the developer's current tier (what a new period grants). */
export async function developerPlan(q: Queryable, config: Config, developerId: string): Promise<TierPlan> {
  const { rows } = await q.query<{ tier: string }>('select tier from developers where id = $1', [developerId]);
  const dev = rows[0];
  if (!dev) throw new ApiError('not_found', { resource: 'developer', id: developerId }, null);
  return planFor(config, dev.tier);
}

/** Creates the account with a first period [start, end) unless it exists; true when this call created it. */
export async function insertAccount(
  q: Queryable,
  developerId: string,
  plan: TierPlan,
  start: Date,
  end: Date,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `insert into credit_accounts (developer_id, cycle_anchor, period_index, period_start, period_end,
                                  monthly_credits, overage_rate, carryover_months)
     values ($1, $2, 0, $2, $3, $4, $5, $6) on conflict (developer_id) do nothing`,
    [developerId, start, end, plan.monthlyCredits, plan.overageRate, plan.carryoverMonths],
  );
  return (rowCount ?? 0) > 0;
}

/** The account row, locked for the rest of the caller's transaction (it must exist). */
export async function lockAccount(q: Queryable, developerId: string): Promise<AccountRow> {
  const { rows } = await q.query<AccountRow>(
    `select ${ACCOUNT_COLUMNS} from credit_accounts where developer_id = $1 for update`,
    [developerId],
  );
  return rows[0]!;
}

/**
 * The developer's account for the current period: created on first use from the developer's tier, and rolled
 * over (lazily, here) when its period has ended.
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
    const plan = await developerPlan(tx, config, developerId);
    await insertAccount(tx, developerId, plan, now, addMonthsUtc(now, 1));
    const a = await lockAccount(tx, developerId);
    return rollForward(tx, a, plan, now);
  });
}

/**
 * Rollover of a locked account whose period ends at or before `until`, to the period that contains `until`.
 * The ending period's overage (on a tier with an overage rate) is recorded for billing; the unused credits of the
 * ending period (monthly + carried − used) carry into the next, capped at carryoverMonths × monthlyCredits;
 * `used` starts again at 0. Several ended periods (an idle account) roll one by one, so carry-over decays as it
 * would have month by month. Periods follow the anchor's monthly schedule; a period whose end Stripe set (see
 * stripe-periods.ts), or one ended early by `endAt` (a Stripe period begins inside it), is off that schedule, and
 * the schedule restarts at its end, so periods never overlap or leave a gap. Runs on the caller's transaction;
 * an account not yet due is returned as is.
 */
export async function rollForward(
  q: Queryable,
  current: AccountRow,
  plan: TierPlan,
  until: Date,
  endAt?: Date,
): Promise<AccountRow> {
  const endsEarly = endAt !== undefined && endAt < current.period_end;
  const a = endsEarly ? { ...current, period_end: endAt } : current;
  if (a.period_end > until) return current;
  const over = a.used - accountLimit(a);
  if (over > 0 && a.overage_rate > 0) {
    await q.query(
      `insert into overage_charges (id, developer_id, period_start, period_end, credits, rate, amount_cents)
       values ($1, $2, $3, $4, $5, $6, $7) on conflict (developer_id, period_start) do nothing`,
      [
        newId('ledger'),
        a.developer_id,
        a.period_start,
        a.period_end,
        over,
        a.overage_rate,
        overageCents(over, a.overage_rate),
      ],
    );
  }
  let anchor = a.cycle_anchor;
  let index = a.period_index;
  if (endsEarly || a.period_end.getTime() === a.stripe_period_end?.getTime()) {
    anchor = a.period_end;
    index = -1;
  }
  let { period_end: end, used, monthly_credits: monthly, carryover_credits: carry } = a;
  while (end <= until) {
    const unused = Math.max(0, monthly + carry - used);
    carry = Math.min(unused, plan.monthlyCredits * plan.carryoverMonths);
    monthly = plan.monthlyCredits;
    used = 0;
    index += 1;
    end = addMonthsUtc(anchor, index + 1);
  }
  const { rows: rolled } = await q.query<AccountRow>(
    `update credit_accounts
        set cycle_anchor = $2, period_index = $3, period_start = $4, period_end = $5, monthly_credits = $6,
            carryover_credits = $7, overage_rate = $8, carryover_months = $9, used = 0, rev = rev + 1,
            updated_at = now()
      where developer_id = $1
      returning ${ACCOUNT_COLUMNS}`,
    [
      a.developer_id,
      anchor,
      index,
      addMonthsUtc(anchor, index),
      end,
      monthly,
      carry,
      plan.overageRate,
      plan.carryoverMonths,
    ],
  );
  return rolled[0]!;
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
