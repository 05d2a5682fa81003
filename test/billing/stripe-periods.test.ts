import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMonthsUtc, ensureAccount, selectAccount } from '../../shared/platform/metering/accounts.ts';
import type { TestPlatform } from '../../support/helpers/platform.ts';
import { sendStripeWebhook, STRIPE_TEST_PRICES, stripeEvent, startStripePlatform } from './stripe-webhooks.ts';

// Credit periods of subscribed developers follow the Stripe subscription's period (shared/domains/billing/stripe-periods.ts).
const WHSEC = 'whsec_test_' + randomBytes(16).toString('hex');
const PRICES = STRIPE_TEST_PRICES;
const DAY = 86_400;

let p: TestPlatform;
let stop: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ platform: p, close: stop } = await startStripePlatform(WHSEC));
});
afterAll(() => stop?.());

const nowS = () => Math.floor(Date.now() / 1000);
const iso = (s: number) => new Date(s * 1000).toISOString();

interface Period {
  start: number;
  end: number;
}

/** A developer with a Stripe customer id, and builders for the events of their subscription. */
async function subscriber(tier: 'starter' | 'pro' = 'starter') {
  const dev = await p.developer(tier);
  const customer = 'cus_' + dev.developerId.slice(-8);
  const subId = 'sub_' + dev.developerId.slice(-8);
  /** From API version 2025-03-31 (basil) on, the period is on the items; before, on the subscription. */
  const subscription = (period: Period, shape: 'basil' | 'legacy' = 'basil') => ({
    id: subId,
    object: 'subscription',
    customer,
    status: 'active',
    metadata: { developerId: dev.developerId },
    ...(shape === 'legacy' ? { current_period_start: period.start, current_period_end: period.end } : {}),
    items: {
      object: 'list',
      data: [
        {
          id: 'si_' + dev.developerId.slice(-8),
          price: { id: PRICES.pro },
          ...(shape === 'basil' ? { current_period_start: period.start, current_period_end: period.end } : {}),
        },
      ],
    },
  });
  /** An invoice paying `period`, next to a proration line and an invoice item whose periods must not count. */
  const invoice = (period: Period, shape: 'basil' | 'legacy' = 'basil') => {
    const line = (kind: 'subscription' | 'proration' | 'invoiceitem', lp: Period) =>
      shape === 'legacy'
        ? { type: kind === 'invoiceitem' ? 'invoiceitem' : 'subscription', proration: kind === 'proration', period: lp }
        : {
            parent:
              kind === 'invoiceitem'
                ? { type: 'invoice_item_details', invoice_item_details: { proration: false, subscription: subId } }
                : {
                    type: 'subscription_item_details',
                    subscription_item_details: { proration: kind === 'proration', subscription: subId },
                  },
            period: lp,
          };
    return {
      id: 'in_' + randomBytes(6).toString('hex'),
      object: 'invoice',
      customer,
      // The invoice's own period is the one before (its usage period): never the credit period.
      period_start: period.start - 30 * DAY,
      period_end: period.start,
      ...(shape === 'legacy'
        ? { subscription: subId }
        : { parent: { type: 'subscription_details', subscription_details: { subscription: subId } } }),
      lines: {
        object: 'list',
        data: [
          line('proration', { start: period.start - 5 * DAY, end: period.start }),
          line('subscription', period),
          line('invoiceitem', { start: period.end + DAY, end: period.end + DAY }),
        ],
      },
    };
  };
  const send = async (type: string, object: Record<string, unknown>, created?: number) => {
    const res = await sendStripeWebhook(p.url, WHSEC, JSON.stringify(stripeEvent(type, object, created)));
    expect(res.status).toBe(200);
    return (await res.json()) as { duplicate: boolean; effect: string };
  };
  const usage = async () => {
    const res = await p.request('/v1/usage', { key: dev.apiKey });
    return (await res.json()) as {
      credits: { used: number; limit: number; remaining: number };
      period: { start: string; end: string };
    };
  };
  const charge = async (units: number) => {
    const hold = await p.infra.meter.reserve({
      developerId: dev.developerId,
      category: 'tts',
      units,
      unit: 'characters',
      provider: 'default',
      billable: true,
      requestId: 'req_' + randomBytes(4).toString('hex'),
      operation: 'synthesize',
    });
    await hold.commit();
  };
  const account = async () => (await selectAccount(p.infra.db, dev.developerId))!;
  return { ...dev, customer, subscription, invoice, send, usage, charge, account };
}

describe('credit periods follow the Stripe subscription', () => {
  it('a subscription event moves the period; rollover rules apply where the new period begins', async () => {
    const d = await subscriber();
    // First use a day ago: the first-use monthly period is running, with 1000 of 50000 starter credits used.
    const firstUse = new Date(Date.now() - DAY * 1000);
    await ensureAccount(p.infra.db, p.config, d.developerId, firstUse);
    await d.charge(1000);
    expect((await d.usage()).period).toEqual({
      start: firstUse.toISOString(),
      end: addMonthsUtc(firstUse, 1).toISOString(),
    });

    const p1 = { start: nowS() - 60, end: nowS() - 60 + 30 * DAY };
    const out = await d.send('customer.subscription.created', d.subscription(p1));
    expect(out).toMatchObject({ duplicate: false, effect: 'status:active tier:pro period:started' });
    const u = await d.usage();
    expect(u.period).toEqual({ start: iso(p1.start), end: iso(p1.end) });
    // The starter period ended at the subscription's start: its 49000 unused credits carry (under pro's cap of
    // one month), and the pro period starts with nothing used. The header cache followed.
    expect(u.credits).toEqual({ used: 0, limit: 249_000, remaining: 249_000 });
    const res = await p.request('/v1/billing/subscription', { key: d.apiKey });
    expect(res.headers.get('x-usage-limit')).toBe('249000');
  });

  it('reads the pre-basil shape: the period on the subscription and the legacy invoice lines', async () => {
    const d = await subscriber();
    const p1 = { start: nowS() - 120, end: nowS() - 120 + 30 * DAY };
    expect((await d.send('customer.subscription.created', d.subscription(p1, 'legacy'))).effect).toBe(
      'status:active tier:pro period:started',
    );
    expect((await d.usage()).period).toEqual({ start: iso(p1.start), end: iso(p1.end) });
    const p2 = { start: p1.end, end: p1.end + 31 * DAY };
    expect((await d.send('invoice.paid', d.invoice(p2, 'legacy'))).effect).toBe('status:active period:started');
    expect((await d.usage()).period).toEqual({ start: iso(p2.start), end: iso(p2.end) });
  });

  it('a replayed or repeated period does not grant credits twice', async () => {
    const d = await subscriber();
    const p1 = { start: nowS() - 300, end: nowS() - 300 + 30 * DAY };
    const created = stripeEvent('customer.subscription.created', d.subscription(p1));
    const body = JSON.stringify(created);
    expect(await (await sendStripeWebhook(p.url, WHSEC, body)).json()).toMatchObject({ duplicate: false });
    await d.charge(5000);
    const before = await d.account();
    expect(before).toMatchObject({ used: 5000, monthly_credits: 200_000, carryover_credits: 0 });

    // The same delivery again (Stripe retries): recognised by its id.
    expect(await (await sendStripeWebhook(p.url, WHSEC, body)).json()).toMatchObject({ duplicate: true });
    // Other events carrying the same period (invoice.paid after the subscription event, an update of something
    // else): new ids, same period, nothing granted.
    expect((await d.send('invoice.paid', d.invoice(p1))).effect).toBe('status:active period:unchanged');
    expect((await d.send('customer.subscription.updated', d.subscription(p1))).effect).toBe(
      'status:active tier:pro (unchanged) period:unchanged',
    );
    const after = await d.account();
    expect(after).toMatchObject({ used: 5000, carryover_credits: 0, rev: before.rev });
    expect((await d.usage()).credits).toEqual({ used: 5000, limit: 200_000, remaining: 195_000 });
  });

  it('an older period after a newer one changes nothing', async () => {
    const d = await subscriber();
    const t0 = nowS() - 1000;
    const p1 = { start: nowS() - 29 * DAY, end: nowS() + DAY };
    const p2 = { start: p1.end, end: p1.end + 30 * DAY };
    await d.send('customer.subscription.created', d.subscription(p1), t0);
    await d.send('customer.subscription.updated', d.subscription(p2), t0 + 10);
    const newest = await d.account();
    expect(newest.period_start.toISOString()).toBe(iso(p2.start));

    // Older by `created`: the event order check drops it.
    expect((await d.send('customer.subscription.updated', d.subscription(p1), t0 + 5)).effect).toBe(
      'ignored:older than the applied state',
    );
    // Newer by `created` but for the older period (a late payment of the previous invoice): the period check.
    expect((await d.send('invoice.paid', d.invoice(p1), t0 + 20)).effect).toBe('status:active period:older');
    expect(await d.account()).toMatchObject({
      rev: newest.rev,
      period_start: newest.period_start,
      period_end: newest.period_end,
      carryover_credits: newest.carryover_credits,
    });
  });

  it('applies carry-over and records overage at the boundary between two subscription periods', async () => {
    const d = await subscriber('pro'); // 200000 a month, one month of carry-over
    const p1 = { start: nowS() - 29 * DAY, end: nowS() + DAY };
    await d.send('customer.subscription.created', d.subscription(p1));
    await d.charge(50_000);

    const p2 = { start: p1.end, end: p1.end + 30 * DAY };
    expect((await d.send('customer.subscription.updated', d.subscription(p2))).effect).toBe(
      'status:active tier:pro (unchanged) period:started',
    );
    const u = await d.usage();
    expect(u.period).toEqual({ start: iso(p2.start), end: iso(p2.end) });
    expect(u.credits).toEqual({ used: 0, limit: 350_000, remaining: 350_000 }); // 150000 unused carried

    // Past the limit in this period (pro has an overage rate): at the next boundary the overage is recorded
    // for billing and nothing carries.
    await d.charge(400_000);
    const p3 = { start: p2.end, end: p2.end + 31 * DAY };
    expect((await d.send('invoice.paid', d.invoice(p3))).effect).toBe('status:active period:started');
    expect((await d.usage()).credits).toEqual({ used: 0, limit: 200_000, remaining: 200_000 });
    const { rows } = await p.infra.db.query<{ period_start: Date; period_end: Date; credits: number }>(
      'select period_start, period_end, credits from overage_charges where developer_id = $1',
      [d.developerId],
    );
    expect(rows).toEqual([
      { period_start: new Date(p2.start * 1000), period_end: new Date(p2.end * 1000), credits: 50_000 },
    ]);
  });

  it('lazy rollover between the period end and the webhook is not granted again; without a subscription the period stays monthly', async () => {
    const d = await subscriber('pro');
    const p1 = { start: nowS() - 30 * DAY, end: nowS() - 3600 };
    expect((await d.send('customer.subscription.created', d.subscription(p1))).effect).toBe(
      'status:active tier:pro (unchanged) period:started',
    );
    // A request after the period ended and before Stripe's renewal arrived: rolled over lazily, one month on.
    const lazy = await d.usage();
    expect(lazy.period).toEqual({ start: iso(p1.end), end: addMonthsUtc(new Date(p1.end * 1000), 1).toISOString() });
    expect(lazy.credits.limit).toBe(400_000);

    const p2 = { start: p1.end, end: p1.end + 28 * DAY };
    expect((await d.send('customer.subscription.updated', d.subscription(p2))).effect).toBe(
      'status:active tier:pro (unchanged) period:aligned',
    );
    const u = await d.usage();
    expect(u.period).toEqual({ start: iso(p2.start), end: iso(p2.end) });
    expect(u.credits.limit).toBe(400_000);

    // The subscription ends: back to starter, and the periods run monthly on from the last one's end.
    await d.send('customer.subscription.deleted', { ...d.subscription(p2), status: 'canceled' });
    const later = new Date((p2.end + 60) * 1000);
    const next = await ensureAccount(p.infra.db, p.config, d.developerId, later);
    expect(next.period_start.toISOString()).toBe(iso(p2.end));
    expect(next.period_end.toISOString()).toBe(addMonthsUtc(new Date(p2.end * 1000), 1).toISOString());
    expect(next.monthly_credits).toBe(50_000);
  });
});
