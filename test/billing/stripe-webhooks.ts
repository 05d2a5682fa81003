import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { startStripeDouble } from '../../support/doubles/stripe.ts';

// Only its webhook helpers are used: generateTestHeaderString signs exactly as Stripe does.
const sdk = new Stripe('sk_test_unused');

let seq = 0;
/** A Stripe event envelope around `object` (`created` in Unix seconds, default now). */
export function stripeEvent(type: string, object: Record<string, unknown>, created = Math.floor(Date.now() / 1000)) {
  return { id: `evt_${randomBytes(8).toString('hex')}_${seq++}`, object: 'event', type, created, data: { object } };
}

/** POSTs a body to the platform's Stripe receiver, signed with `secret` unless a header is given. */
export function sendStripeWebhook(baseUrl: string, secret: string, body: string, header?: string): Promise<Response> {
  const signature = header ?? sdk.webhooks.generateTestHeaderString({ payload: body, secret });
  return fetch(`${baseUrl}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
    body,
  });
}

/** The recurring prices of the tiers in the tests' Stripe configuration. */
export const STRIPE_TEST_PRICES = { starter: 'price_starter_test', pro: 'price_pro_test', scale: 'price_scale_test' };

/** The platform environment for Stripe: every STRIPE_* set, the API pointed at a local double. */
export function stripeTestEnv(apiBase: string, webhookSecret: string): Record<string, string> {
  return {
    STRIPE_SECRET_KEY: 'sk_test_platform',
    STRIPE_WEBHOOK_SECRET: webhookSecret,
    STRIPE_PRICE_STARTER: STRIPE_TEST_PRICES.starter,
    STRIPE_PRICE_PRO: STRIPE_TEST_PRICES.pro,
    STRIPE_PRICE_SCALE: STRIPE_TEST_PRICES.scale,
    STRIPE_API_BASE: apiBase,
  };
}

/** The platform (api role) with Stripe configured against a local double, and that double. */
export async function startStripePlatform(webhookSecret: string): Promise<{
  platform: TestPlatform;
  double: Awaited<ReturnType<typeof startStripeDouble>>;
  close(): Promise<void>;
}> {
  const double = await startStripeDouble();
  const platform = await startTestPlatform({ roles: ['api'], env: stripeTestEnv(double.url, webhookSecret) });
  return {
    platform,
    double,
    async close() {
      await platform.close();
      await double.close();
    },
  };
}
