import type Stripe from 'stripe';
import { accountLimit, ensureAccount } from '../../shared/platform/metering/accounts.ts';
import type { CheckoutBody, CheckoutResult, Subscription } from '../../shared/contracts/billing.ts';
import { claimBillingCustomer, getBillingCustomer } from '../../shared/domains/billing/customers.ts';
import { requireStripe, stripeFailure } from '../../shared/domains/billing/stripe-client.ts';
import { planFor, isTier } from '../../shared/platform/metering/tiers.ts';
import { getDeveloper } from '../../shared/kernel/db/developers.ts';
import { ifDate, ifSet } from '../../shared/contracts/absent.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import type { Infra } from '../../shared/platform/infra.ts';

/**
 * The developer's subscription: tier and plan from config, the balance of the current period, and what Stripe
 * told us through webhooks. Readable without Stripe configured (tier and credits exist without a processor).
 */
export async function getSubscription(infra: Infra, developerId: string): Promise<Subscription> {
  const [dev, account, customer] = await Promise.all([
    getDeveloper(infra.db, developerId),
    ensureAccount(infra.db, infra.config, developerId),
    getBillingCustomer(infra.db, developerId),
  ]);
  if (!dev) throw ApiError.notFound('developer', developerId);
  infra.meter.publish(account);
  const tier = isTier(dev.tier) ? dev.tier : 'starter';
  const plan = planFor(infra.config, tier);
  const limit = accountLimit(account);
  return {
    tier,
    tierDisplay: plan.display,
    credits: { used: account.used, limit, remaining: Math.max(0, limit - account.used) },
    plan: {
      monthlyCredits: plan.monthlyCredits,
      overageRate: plan.overageRate,
      carryoverMonths: plan.carryoverMonths,
    },
    ...ifSet('paymentCustomerId', customer?.stripe_customer_id),
    ...ifDate('tierExpiresAt', customer?.tier_expires_at),
    ...ifSet('subscriptionStatus', customer?.subscription_status),
  };
}

/**
 * The developer's Stripe customer, created on first need and reused ever after. The idempotency key makes two
 * concurrent first checkouts get the same customer from Stripe; the table keeps the first one recorded.
 */
async function ensureCustomer(infra: Infra, stripe: Stripe, developerId: string): Promise<string> {
  const existing = await getBillingCustomer(infra.db, developerId);
  if (existing) return existing.stripe_customer_id;
  const dev = await getDeveloper(infra.db, developerId);
  if (!dev) throw ApiError.notFound('developer', developerId);
  const customer = await stripe.customers
    .create({ name: dev.name, metadata: { developerId } }, { idempotencyKey: `vap-customer-${developerId}` })
    .catch((e: unknown) => {
      throw stripeFailure(e);
    });
  const row = await claimBillingCustomer(infra.db, developerId, customer.id);
  infra.log.info({ developerId, customerId: row.stripe_customer_id }, 'stripe customer created');
  return row.stripe_customer_id;
}

const LIVE_STATUSES = new Set(['active', 'trialing', 'past_due']);

/** A hosted Checkout page for a tier (subscription mode). The tier is applied when Stripe confirms by webhook. */
export async function createCheckout(infra: Infra, developerId: string, body: CheckoutBody): Promise<CheckoutResult> {
  const { stripe, settings } = requireStripe(infra.config);
  const current = await getBillingCustomer(infra.db, developerId);
  if (current?.stripe_subscription_id && LIVE_STATUSES.has(current.subscription_status ?? '')) {
    // A second Checkout would start a second subscription billed alongside the first.
    throw new ApiError('conflict', {
      detail: 'A subscription is already active; change the plan in the billing portal (POST /v1/billing/portal).',
    });
  }
  const customer = await ensureCustomer(infra, stripe, developerId);
  const metadata = { developerId, tier: body.tier };
  const session = await stripe.checkout.sessions
    .create({
      mode: 'subscription',
      line_items: [{ price: settings.prices[body.tier], quantity: 1 }],
      customer,
      success_url: body.successUrl,
      cancel_url: body.cancelUrl,
      client_reference_id: developerId,
      metadata,
      subscription_data: { metadata },
    })
    .catch((e: unknown) => {
      throw stripeFailure(e);
    });
  if (!session.url) throw new ApiError('upstream_error', { provider: 'stripe', detail: 'no checkout URL returned' });
  return { url: session.url, sessionId: session.id };
}

/** A hosted Billing Portal page (subscription, invoices, payment methods). */
export async function createPortal(infra: Infra, developerId: string, returnUrl?: string): Promise<{ url: string }> {
  const { stripe } = requireStripe(infra.config);
  const customer = await ensureCustomer(infra, stripe, developerId);
  const session = await stripe.billingPortal.sessions
    .create({ customer, return_url: returnUrl ?? infra.config.PUBLIC_BASE_URL })
    .catch((e: unknown) => {
      throw stripeFailure(e);
    });
  return { url: session.url };
}
