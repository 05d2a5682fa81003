import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMonthsUtc } from '../../shared/platform/metering/accounts.ts';
import { reportOverage } from '../../shared/domains/billing/overage.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { sendStripeWebhook, STRIPE_TEST_PRICES, stripeEvent as event, startStripePlatform } from './stripe-webhooks.ts';

const WHSEC = 'whsec_test_' + randomBytes(16).toString('hex');
const PRICES = STRIPE_TEST_PRICES;
const sdk = new Stripe('sk_test_unused');

let p: TestPlatform;
let double: Awaited<ReturnType<typeof startStripePlatform>>['double'];
let stop: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ platform: p, double, close: stop } = await startStripePlatform(WHSEC));
});
afterAll(() => stop?.());

const sendWebhook = (body: string, header?: string) => sendStripeWebhook(p.url, WHSEC, body, header);

function subscription(developerId: string, customer: string, over: Record<string, unknown> = {}) {
  return {
    id: 'sub_' + developerId.slice(-8),
    object: 'subscription',
    customer,
    status: 'active',
    metadata: { developerId },
    items: {
      object: 'list',
      data: [{ id: 'si_1', price: { id: PRICES.pro }, current_period_end: Math.floor(Date.now() / 1000) + 30 * 86400 }],
    },
    ...over,
  };
}

async function tierOf(developerId: string): Promise<string> {
  const { rows } = await p.infra.db.query<{ tier: string }>('select tier from developers where id = $1', [developerId]);
  return rows[0]!.tier;
}

describe('checkout and portal against a Stripe double', () => {
  it('creates a subscription Checkout with the tier price, the customer once, and reuses it', async () => {
    const { apiKey, developerId } = await p.developer();
    const body = { tier: 'pro', successUrl: 'https://app.example.com/ok', cancelUrl: 'https://app.example.com/no' };
    const res = await p.request('/v1/billing/checkout', { method: 'POST', key: apiKey, json: body });
    expect(res.status).toBe(200);
    const out = (await res.json()) as { url: string; sessionId: string };
    expect(out.sessionId).toMatch(/^cs_test_/);
    expect(out.url).toBe(`https://checkout.stripe.com/c/pay/${out.sessionId}`);

    const again = await p.request('/v1/billing/checkout', {
      method: 'POST',
      key: apiKey,
      json: { ...body, tier: 'scale' },
    });
    expect(again.status).toBe(200);

    const customers = double.requests.filter(
      (r) => r.path === '/v1/customers' && r.form['metadata[developerId]'] === developerId,
    );
    expect(customers).toHaveLength(1);
    const sessions = double.requests.filter(
      (r) => r.path === '/v1/checkout/sessions' && r.form.client_reference_id === developerId,
    );
    expect(sessions).toHaveLength(2);
    const first = sessions[0]!.form;
    expect(first.mode).toBe('subscription');
    expect(first['line_items[0][price]']).toBe(PRICES.pro);
    expect(first['line_items[0][quantity]']).toBe('1');
    expect(first.success_url).toBe(body.successUrl);
    expect(first.cancel_url).toBe(body.cancelUrl);
    expect(first['subscription_data[metadata][developerId]']).toBe(developerId);
    expect(sessions[1]!.form['line_items[0][price]']).toBe(PRICES.scale);
    expect(sessions[1]!.form.customer).toBe(first.customer);

    const sub = (await (await p.request('/v1/billing/subscription', { key: apiKey })).json()) as {
      paymentCustomerId: string;
    };
    expect(sub.paymentCustomerId).toBe(first.customer);
  });

  it('rejects a bad checkout body with a 400 envelope', async () => {
    const { apiKey } = await p.developer();
    const res = await p.request('/v1/billing/checkout', {
      method: 'POST',
      key: apiKey,
      json: { tier: 'gold', successUrl: 'nope', cancelUrl: 'https://x.example' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
  });

  it('opens the billing portal for the same customer', async () => {
    const { apiKey, developerId } = await p.developer();
    const res = await p.request('/v1/billing/portal', {
      method: 'POST',
      key: apiKey,
      json: { returnUrl: 'https://app.example.com/account' },
    });
    expect(res.status).toBe(200);
    const { url } = (await res.json()) as { url: string };
    expect(url).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\/bps_/);
    const portal = double.requests.find(
      (r) => r.path === '/v1/billing_portal/sessions' && r.form.return_url === 'https://app.example.com/account',
    );
    const customer = double.requests.find(
      (r) => r.path === '/v1/customers' && r.form['metadata[developerId]'] === developerId,
    );
    expect(portal!.form.customer).toBeDefined();
    expect(portal!.form.customer).toBe(
      (
        await p.infra.db.query('select stripe_customer_id from billing_customers where developer_id = $1', [
          developerId,
        ])
      ).rows[0].stripe_customer_id,
    );
    expect(customer).toBeDefined();
    // No body at all is fine too.
    const bare = await p.request('/v1/billing/portal', { method: 'POST', key: apiKey });
    expect(bare.status).toBe(200);
  });
});

describe('Stripe webhooks', () => {
  it('a signed checkout.session.completed upgrades the tier; the limit and rate-limit tier follow', async () => {
    const { apiKey, developerId } = await p.developer();
    const before = await p.request('/v1/usage', { key: apiKey });
    expect(before.headers.get('x-usage-limit')).toBe('50000');
    expect(before.headers.get('x-ratelimit-limit')).toBe('120');

    const body = JSON.stringify(
      event('checkout.session.completed', {
        id: 'cs_test_1',
        object: 'checkout.session',
        mode: 'subscription',
        payment_status: 'paid',
        customer: 'cus_wh_' + developerId.slice(-6),
        subscription: 'sub_wh_' + developerId.slice(-6),
        client_reference_id: developerId,
        metadata: { developerId, tier: 'pro' },
      }),
    );
    const res = await sendWebhook(body);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ received: true, duplicate: false, effect: 'tier:pro' });
    expect(await tierOf(developerId)).toBe('pro');

    const after = await p.request('/v1/billing/subscription', { key: apiKey });
    const sub = (await after.json()) as Record<string, unknown>;
    expect(sub).toMatchObject({
      tier: 'pro',
      tierDisplay: 'Pro',
      plan: { monthlyCredits: 200000, overageRate: 0.6, carryoverMonths: 1 },
      credits: { used: 0, limit: 200000, remaining: 200000 },
      paymentCustomerId: 'cus_wh_' + developerId.slice(-6),
      subscriptionStatus: 'active',
    });
    expect(after.headers.get('x-usage-limit')).toBe('200000');
    expect(after.headers.get('x-ratelimit-limit')).toBe('600');

    // Subscribed: another Checkout would bill a second subscription, so plan changes go through the portal.
    const second = await p.request('/v1/billing/checkout', {
      method: 'POST',
      key: apiKey,
      json: { tier: 'scale', successUrl: 'https://a.example/s', cancelUrl: 'https://a.example/c' },
    });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { message: string } }).error.message).toMatch(/billing portal/);
  });

  it('ignores a replayed event and rejects a tampered or unsigned one', async () => {
    const { developerId } = await p.developer();
    const customer = 'cus_rp_' + developerId.slice(-6);
    const evt = event('customer.subscription.created', subscription(developerId, customer));
    const body = JSON.stringify(evt);
    const header = sdk.webhooks.generateTestHeaderString({ payload: body, secret: WHSEC });
    expect(await (await sendWebhook(body, header)).json()).toMatchObject({ duplicate: false });
    expect(await tierOf(developerId)).toBe('pro');

    // The operator downgrades by hand; a replay of the old event must not upgrade again.
    await p.infra.db.query("update developers set tier = 'starter' where id = $1", [developerId]);
    const replay = await sendWebhook(body, header);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ duplicate: true });
    expect(await tierOf(developerId)).toBe('starter');

    const tampered = body.replace('"active"', '"trialing"');
    const bad = await sendWebhook(tampered, header);
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_signature');

    const wrongSecret = sdk.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_other' });
    expect((await sendWebhook(body, wrongSecret)).status).toBe(401);
    const old = sdk.webhooks.generateTestHeaderString({
      payload: body,
      secret: WHSEC,
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    expect((await sendWebhook(body, old)).status).toBe(401);
    const unsigned = await fetch(`${p.url}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(unsigned.status).toBe(401);
  });

  it('is out-of-order safe: an older update after a deletion does not bring the tier back', async () => {
    const { developerId } = await p.developer();
    const customer = 'cus_oo_' + developerId.slice(-6);
    const t0 = Math.floor(Date.now() / 1000) - 100;
    await sendWebhook(JSON.stringify(event('customer.subscription.created', subscription(developerId, customer), t0)));
    expect(await tierOf(developerId)).toBe('pro');

    const deleted = event(
      'customer.subscription.deleted',
      subscription(developerId, customer, { status: 'canceled' }),
      t0 + 20,
    );
    const res = await sendWebhook(JSON.stringify(deleted));
    expect(await res.json()).toMatchObject({ effect: 'status:canceled tier:starter' });
    expect(await tierOf(developerId)).toBe('starter');

    const late = event('customer.subscription.updated', subscription(developerId, customer), t0 + 10);
    expect(await (await sendWebhook(JSON.stringify(late))).json()).toMatchObject({
      effect: 'ignored:older than the applied state',
    });
    // Even a newer-stamped update of the canceled subscription cannot revive it.
    const revive = event('customer.subscription.updated', subscription(developerId, customer), t0 + 30);
    expect(await (await sendWebhook(JSON.stringify(revive))).json()).toMatchObject({
      effect: 'ignored:subscription already canceled',
    });
    expect(await tierOf(developerId)).toBe('starter');
  });

  it('records invoice.paid and invoice.payment_failed on the current subscription', async () => {
    const { apiKey, developerId } = await p.developer();
    const customer = 'cus_inv_' + developerId.slice(-6);
    const sub = subscription(developerId, customer);
    const t0 = Math.floor(Date.now() / 1000) - 50;
    await sendWebhook(JSON.stringify(event('customer.subscription.created', sub, t0)));
    const invoice = (over: Record<string, unknown> = {}) => ({
      id: 'in_1',
      object: 'invoice',
      customer,
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id } },
      lines: { object: 'list', data: [{ period: { start: t0, end: t0 + 60 * 86400 } }] },
      ...over,
    });
    const failed = await sendWebhook(JSON.stringify(event('invoice.payment_failed', invoice(), t0 + 5)));
    expect(await failed.json()).toMatchObject({ effect: 'status:past_due' });
    let s = (await (await p.request('/v1/billing/subscription', { key: apiKey })).json()) as Record<string, unknown>;
    expect(s).toMatchObject({ tier: 'pro', subscriptionStatus: 'past_due' });

    await sendWebhook(JSON.stringify(event('invoice.paid', invoice(), t0 + 10)));
    s = (await (await p.request('/v1/billing/subscription', { key: apiKey })).json()) as Record<string, unknown>;
    expect(s).toMatchObject({ tier: 'pro', subscriptionStatus: 'active' });
    expect(s.tierExpiresAt).toBe(new Date((t0 + 60 * 86400) * 1000).toISOString());
  });
});

describe('overage', () => {
  it('records the overage of an ended period at rollover and reports it to Stripe once as an invoice item', async () => {
    const { apiKey, developerId } = await p.developer('pro');
    await p.request('/v1/billing/portal', { method: 'POST', key: apiKey }); // creates the Stripe customer
    const hold = await p.infra.meter.reserve({
      developerId,
      category: 'tts',
      units: 250_000,
      unit: 'characters',
      provider: 'default',
      billable: true,
      requestId: 'req_overage',
      operation: 'synthesize',
    });
    await hold.commit();
    await p.infra.db.query(
      'update credit_accounts set cycle_anchor = $2, period_start = $2, period_end = $3 where developer_id = $1',
      [developerId, addMonthsUtc(new Date(), -1), new Date(Date.now() - 1000)],
    );
    const usage = (await (await p.request('/v1/usage', { key: apiKey })).json()) as { credits: { limit: number } };
    expect(usage.credits.limit).toBe(200_000); // nothing unused to carry over
    const { rows } = await p.infra.db.query<{ credits: number; amount_cents: number }>(
      'select credits, amount_cents from overage_charges where developer_id = $1',
      [developerId],
    );
    expect(rows).toEqual([{ credits: 50_000, amount_cents: 3000 }]); // 50 × $0.60

    const first = await reportOverage(p.infra);
    expect(first.reported).toBeGreaterThanOrEqual(1);
    const customer = (
      await p.infra.db.query<{ stripe_customer_id: string }>(
        'select stripe_customer_id from billing_customers where developer_id = $1',
        [developerId],
      )
    ).rows[0]!.stripe_customer_id;
    const items = double.requests.filter((r) => r.path === '/v1/invoiceitems' && r.form.customer === customer);
    expect(items).toHaveLength(1);
    expect(items[0]!.form).toMatchObject({ amount: '3000', currency: 'usd', 'metadata[developerId]': developerId });
    expect(String(items[0]!.headers['idempotency-key'])).toMatch(/^vap-overage-/);
    await reportOverage(p.infra);
    expect(double.requests.filter((r) => r.path === '/v1/invoiceitems' && r.form.customer === customer)).toHaveLength(
      1,
    );
  });
});

describe('without Stripe configured', () => {
  it('answers 503 billing_not_configured on checkout, portal and the webhook; subscription still reads', async () => {
    const bare = await startTestPlatform({ roles: ['api'] });
    try {
      const { apiKey } = await bare.developer();
      const checkout = await bare.request('/v1/billing/checkout', {
        method: 'POST',
        key: apiKey,
        json: { tier: 'pro', successUrl: 'https://a.example/s', cancelUrl: 'https://a.example/c' },
      });
      expect(checkout.status).toBe(503);
      expect(((await checkout.json()) as { error: { code: string } }).error.code).toBe('billing_not_configured');
      expect((await bare.request('/v1/billing/portal', { method: 'POST', key: apiKey })).status).toBe(503);
      const hook = await fetch(`${bare.url}/webhooks/stripe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(hook.status).toBe(503);
      const sub = await bare.request('/v1/billing/subscription', { key: apiKey });
      expect(sub.status).toBe(200);
      const body = (await sub.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ tier: 'starter' });
      // Not set: absent, never null (strings in the contract are strings or absent).
      for (const f of ['paymentCustomerId', 'tierExpiresAt', 'subscriptionStatus']) expect(body).not.toHaveProperty(f);
    } finally {
      await bare.close();
    }
  });
});
