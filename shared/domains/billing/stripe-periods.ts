import type { Queryable } from '../../kernel/db/pool.ts';
import {
  ACCOUNT_COLUMNS,
  insertAccount,
  lockAccount,
  rollForward,
  type AccountRow,
} from '../../platform/metering/accounts.ts';
import type { TierPlan } from '../../platform/metering/tiers.ts';

/** A subscription's billing period, [start, end). */
export interface StripePeriod {
  start: Date;
  end: Date;
}

/**
 * What applying a period did: `started` a new credit period (rollover rules applied, or the account created),
 * `aligned` the current credit period to Stripe's dates without granting anything, `extended` the current period's
 * end (same start, later end: a trial extended), or nothing: `unchanged` (the period already applied, e.g. a
 * replay under another event id, or invoice.paid after customer.subscription.updated) or `older` (a period that
 * starts before the newest one applied: an event delivered out of order).
 */
export type PeriodOutcome = 'started' | 'aligned' | 'extended' | 'unchanged' | 'older';

type Obj = Record<string, unknown>;

const seconds = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function periodOf(start: unknown, end: unknown): StripePeriod | null {
  const s = seconds(start);
  const e = seconds(end);
  return s !== null && e !== null && e > s ? { start: new Date(s * 1000), end: new Date(e * 1000) } : null;
}

/** The period that ends last: with items or lines of different intervals, the one the subscription renews on. */
function latest(periods: (StripePeriod | null)[]): StripePeriod | null {
  let best: StripePeriod | null = null;
  for (const p of periods) if (p && (!best || p.end > best.end)) best = p;
  return best;
}

const listData = (v: unknown): Obj[] => ((v as Obj | null | undefined)?.data as Obj[] | undefined) ?? [];

/**
 * The current period of a subscription object. Stripe API versions before 2025-03-31 (basil) carry
 * `current_period_start`/`current_period_end` on the subscription; from basil on they are only on each
 * subscription item (`items.data[].current_period_*`). The webhook endpoint's API version decides which arrives,
 * so both are read.
 */
export function subscriptionPeriod(sub: Obj): StripePeriod | null {
  return (
    periodOf(sub.current_period_start, sub.current_period_end) ??
    latest(listData(sub.items).map((i) => periodOf(i.current_period_start, i.current_period_end)))
  );
}

/**
 * The subscription period an invoice pays for: the `period` of its subscription lines. Not the invoice's own
 * `period_start`/`period_end`, which on a subscription invoice cover the period before (the one whose usage it
 * collects); and not proration lines or one-off invoice items (such as our overage items), whose periods are
 * partial. Before basil a subscription line has `type: 'subscription'` and `proration`; from basil on
 * `parent.type: 'subscription_item_details'` and `parent.subscription_item_details.proration`. Only the lines
 * included in the event are read (Stripe includes the first page; the subscription line is among them).
 */
export function invoicePeriod(inv: Obj, subscriptionId: string): StripePeriod | null {
  const periods = listData(inv.lines).map((line) => {
    const parent = line.parent as Obj | null | undefined;
    const details = parent?.subscription_item_details as Obj | null | undefined;
    const basil = parent?.type === 'subscription_item_details' && details?.proration !== true;
    const legacy = line.type === 'subscription' && line.proration !== true;
    const sub = details?.subscription ?? line.subscription;
    if (!(basil || legacy) || (typeof sub === 'string' && sub !== subscriptionId)) return null;
    const period = line.period as Obj | undefined;
    return periodOf(period?.start, period?.end);
  });
  return latest(periods);
}

/**
 * Makes the developer's credit period follow their Stripe subscription's period. Runs on the webhook's
 * transaction with the account row locked, so it serialises with lazy rollover and with charges. `plan` is the
 * plan of the tier the subscription is on: a new period grants its credits and its carry-over cap applies, while
 * the ending period is rolled over as it stood (the caller applies a tier change after this, so a starter
 * period's unused credits are not counted at a paid tier's monthly amount).
 *
 * Idempotent under Stripe's retries and reordering: the newest period applied is kept on the account
 * (`stripe_period_start/end`), and only a period that starts after it changes anything, once. The same period
 * again does nothing (at most moves the end later, never back); an older one is ignored.
 *
 * A newer period begins a new credit period with the rollover rules of `rollForward` (overage of the ending
 * period recorded, carry-over capped, `used` back to 0): monthly periods that ended before it are rolled first,
 * and a period still running at Stripe's start (a first subscription mid-period, a reset billing cycle) ends
 * there. When the current period already starts at Stripe's start (lazy rollover ran between the period's end
 * and the webhook) or after it (first use came after the subscription began), only its dates are aligned: no
 * credits are granted twice.
 */
export async function applySubscriptionPeriod(
  q: Queryable,
  developerId: string,
  period: StripePeriod,
  plan: TierPlan,
): Promise<{ outcome: PeriodOutcome; account: AccountRow | null }> {
  const created = await insertAccount(q, developerId, plan, period.start, period.end);
  let a = await lockAccount(q, developerId);
  const start = period.start.getTime();
  const seen = a.stripe_period_start?.getTime();
  if (!created && seen !== undefined && start <= seen) {
    if (start < seen) return { outcome: 'older', account: null };
    if (a.period_start.getTime() !== start || period.end <= a.period_end)
      return { outcome: 'unchanged', account: null };
    return { outcome: 'extended', account: await setPeriod(q, developerId, period) };
  }
  let outcome: PeriodOutcome = created ? 'started' : 'aligned';
  if (!created && a.period_start < period.start) {
    a = await rollForward(q, a, plan, period.start);
    if (a.period_start < period.start) a = await rollForward(q, a, plan, period.start, period.start);
    outcome = 'started';
  }
  return { outcome, account: await setPeriod(q, developerId, period) };
}

/** The account's period becomes Stripe's (period 0 of a schedule anchored at its start) and the newest seen. */
async function setPeriod(q: Queryable, developerId: string, period: StripePeriod): Promise<AccountRow> {
  const { rows } = await q.query<AccountRow>(
    `update credit_accounts
        set cycle_anchor = $2, period_index = 0, period_start = $2, period_end = $3, stripe_period_start = $2,
            stripe_period_end = $3, rev = rev + 1, updated_at = now()
      where developer_id = $1
      returning ${ACCOUNT_COLUMNS}`,
    [developerId, period.start, period.end],
  );
  return rows[0]!;
}
