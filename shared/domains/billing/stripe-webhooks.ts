import type Stripe from 'stripe';
import { applyTier, developerPlan, type AccountRow } from '../../platform/metering/accounts.ts';
import {
  findDeveloperByCustomer,
  lockBillingCustomer,
  updateSubscriptionState,
  type BillingCustomerRow,
} from './customers.ts';
import { requireStripe } from './stripe-client.ts';
import { recordStripeEvent } from './stripe-events.ts';
import {
  applySubscriptionPeriod,
  invoicePeriod,
  subscriptionPeriod,
  type PeriodOutcome,
  type StripePeriod,
} from './stripe-periods.ts';
import { isTier, planFor, tierPlans, type Tier, type TierPlan } from '../../platform/metering/tiers.ts';
import type { Config } from '../../kernel/config/index.ts';
import { getDeveloper, lockDeveloperTier } from '../../kernel/db/developers.ts';
import { withTransaction, type DbClient } from '../../kernel/db/pool.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { Infra } from '../../platform/infra.ts';

export interface WebhookOutcome {
  received: true;
  duplicate: boolean;
  /** What the event did (for logs and tests): `tier:pro`, `status:past_due`, `period:started`, `ignored:<why>`. */
  effect: string;
}

interface Effect {
  effect: string;
  developerId?: string;
  tierChanged?: boolean;
  /** The credit period moved (a Stripe period applied): the balance caches need the new row. */
  periodChanged?: boolean;
  account?: AccountRow | null;
}

/** Subscription statuses that keep the paid tier (past_due: Stripe is still retrying the payment). */
const PAID_STATUSES = new Set(['active', 'trialing', 'past_due']);
/** Statuses that end it: the developer falls back to starter. */
const ENDED_STATUSES = new Set(['canceled', 'unpaid', 'incomplete_expired']);

/**
 * Verifies `Stripe-Signature` over the raw body (SDK constructEvent, 300 s tolerance), then applies the event in
 * one transaction with its id recorded: a replay of a processed id does nothing; a failure rolls back the record
 * so Stripe's retry runs it again. Out of order: state-changing events older than the last applied one are
 * ignored, and a canceled subscription never comes back to life.
 */
export async function handleStripeWebhook(
  infra: Infra,
  rawBody: Buffer,
  signature: string | string[] | undefined,
): Promise<WebhookOutcome> {
  const { stripe, settings } = requireStripe(infra.config);
  if (typeof signature !== 'string' || signature === '')
    throw new ApiError('invalid_signature', {}, 'Stripe-Signature');
  let event: Stripe.Event;
  try {
    event = stripe.webhooks.constructEvent(rawBody, signature, settings.webhookSecret);
  } catch {
    infra.log.warn({ bytes: rawBody.length }, 'stripe webhook signature rejected');
    throw new ApiError('invalid_signature', {}, 'Stripe-Signature');
  }
  const log = infra.log.child({ component: 'stripe-webhook', eventId: event.id, type: event.type });
  const result = await withTransaction(infra.db, async (tx) => {
    if (!(await recordStripeEvent(tx, event)))
      return { duplicate: true, effect: { effect: 'ignored:duplicate' } as Effect };
    return { duplicate: false, effect: await applyEvent(tx, infra.config, event) };
  });
  const { effect } = result;
  if (effect.developerId && effect.tierChanged) await infra.authenticator.invalidateDeveloper(effect.developerId);
  if (effect.developerId && (effect.tierChanged || effect.periodChanged)) {
    if (effect.account) infra.meter.publish(effect.account);
    else await infra.meter.refresh(effect.developerId).catch(() => undefined);
  }
  log.info({ developerId: effect.developerId, effect: effect.effect, duplicate: result.duplicate }, 'stripe event');
  return { received: true, duplicate: result.duplicate, effect: effect.effect };
}

type Obj = Record<string, unknown>;
const idOf = (v: unknown): string | null =>
  typeof v === 'string'
    ? v
    : v && typeof v === 'object' && typeof (v as Obj).id === 'string'
      ? ((v as Obj).id as string)
      : null;
const metaOf = (o: Obj): Record<string, string> =>
  ((o.metadata as Record<string, string> | null) ?? {}) as Record<string, string>;

async function developerFor(tx: DbClient, o: Obj, direct?: string | null): Promise<string | null> {
  const candidates = [direct, metaOf(o).developerId].filter((x): x is string => typeof x === 'string' && x !== '');
  for (const id of candidates) {
    if (await getDeveloper(tx, id)) return id;
  }
  const customer = idOf(o.customer);
  return customer ? findDeveloperByCustomer(tx, customer) : null;
}

async function applyEvent(tx: DbClient, config: Config, event: Stripe.Event): Promise<Effect> {
  const o = event.data.object as unknown as Obj;
  switch (event.type) {
    case 'checkout.session.completed':
      return checkoutCompleted(tx, config, event, o);
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return subscriptionChanged(tx, config, event, o);
    case 'invoice.paid':
    case 'invoice.payment_failed':
      return invoiceEvent(tx, config, event, o);
    default:
      return { effect: 'ignored:unhandled type' };
  }
}

async function stateRow(tx: DbClient, o: Obj, developerId: string): Promise<BillingCustomerRow | null> {
  const customer = idOf(o.customer);
  if (!customer) return null;
  return lockBillingCustomer(tx, developerId, customer);
}

async function setTier(tx: DbClient, config: Config, developerId: string, tier: Tier, label: string): Promise<Effect> {
  if ((await lockDeveloperTier(tx, developerId)) === tier)
    return { effect: `${label}tier:${tier} (unchanged)`, developerId };
  const account = await applyTier(tx, config, developerId, tier);
  return { effect: `${label}tier:${tier}`, developerId, tierChanged: true, account };
}

async function checkoutCompleted(tx: DbClient, config: Config, event: Stripe.Event, s: Obj): Promise<Effect> {
  if (s.mode !== 'subscription') return { effect: 'ignored:not a subscription checkout' };
  const developerId = await developerFor(tx, s, s.client_reference_id as string | null);
  if (!developerId) return { effect: 'ignored:unknown developer' };
  const row = await stateRow(tx, s, developerId);
  if (!row) return { effect: 'ignored:no customer', developerId };
  const subscriptionId = idOf(s.subscription);
  const tier = metaOf(s).tier;
  if (event.created < row.state_event_created) return { effect: 'ignored:older than the applied state', developerId };
  if (row.stripe_subscription_id === subscriptionId && row.subscription_status === 'canceled') {
    return { effect: 'ignored:subscription already canceled', developerId };
  }
  if (s.payment_status !== 'paid' && s.payment_status !== 'no_payment_required') {
    return { effect: 'ignored:payment pending', developerId };
  }
  await updateSubscriptionState(tx, developerId, {
    subscriptionId,
    status: row.stripe_subscription_id === subscriptionId ? (row.subscription_status ?? 'active') : 'active',
    tierExpiresAt: row.tier_expires_at,
    eventCreated: event.created,
  });
  if (!isTier(tier)) return { effect: 'ignored:no tier in metadata', developerId };
  return setTier(tx, config, developerId, tier, '');
}

function tierOfSubscription(config: Config, sub: Obj): Tier | null {
  const items = ((sub.items as Obj | undefined)?.data as Obj[] | undefined) ?? [];
  const plans = Object.values(tierPlans(config));
  for (const item of items) {
    const price = idOf(item.price);
    const plan = plans.find((p) => p.stripePrice && p.stripePrice === price);
    if (plan) return plan.tier;
  }
  const meta = metaOf(sub).tier;
  return isTier(meta) ? meta : null;
}

function periodEndOf(sub: Obj): Date | null {
  const items = ((sub.items as Obj | undefined)?.data as Obj[] | undefined) ?? [];
  const ends = [sub.current_period_end, ...items.map((i) => i.current_period_end)].filter(
    (x): x is number => typeof x === 'number',
  );
  return ends.length ? new Date(Math.max(...ends) * 1000) : null;
}

async function subscriptionChanged(tx: DbClient, config: Config, event: Stripe.Event, sub: Obj): Promise<Effect> {
  const developerId = await developerFor(tx, sub);
  if (!developerId) return { effect: 'ignored:unknown developer' };
  const row = await stateRow(tx, sub, developerId);
  if (!row) return { effect: 'ignored:no customer', developerId };
  const subscriptionId = idOf(sub.id);
  const deleted = event.type === 'customer.subscription.deleted';
  if (event.created < row.state_event_created) return { effect: 'ignored:older than the applied state', developerId };
  if (row.stripe_subscription_id === subscriptionId && row.subscription_status === 'canceled' && !deleted) {
    return { effect: 'ignored:subscription already canceled', developerId };
  }
  const currentIsOther =
    row.stripe_subscription_id !== null &&
    row.stripe_subscription_id !== subscriptionId &&
    PAID_STATUSES.has(row.subscription_status ?? '');
  const status = deleted ? 'canceled' : String(sub.status ?? 'unknown');
  if (currentIsOther && !PAID_STATUSES.has(status)) {
    // The end of an older subscription does not downgrade the one now in force.
    return { effect: 'ignored:not the current subscription', developerId };
  }
  const paid = PAID_STATUSES.has(status);
  await updateSubscriptionState(tx, developerId, {
    subscriptionId,
    status,
    tierExpiresAt: paid ? (periodEndOf(sub) ?? row.tier_expires_at) : null,
    eventCreated: event.created,
  });
  if (paid) {
    const tier = tierOfSubscription(config, sub);
    if (!tier) return { effect: 'ignored:price of no tier', developerId };
    // The period first: a new period rolls the ending one over as it stood, under the plan of the tier it
    // renews on; the tier change then applies to the period now current.
    const period = await applyPeriod(tx, developerId, subscriptionPeriod(sub), planFor(config, tier));
    return withPeriod(await setTier(tx, config, developerId, tier, `status:${status} `), period);
  }
  if (ENDED_STATUSES.has(status)) return setTier(tx, config, developerId, 'starter', `status:${status} `);
  return { effect: `status:${status}`, developerId };
}

async function invoiceEvent(tx: DbClient, config: Config, event: Stripe.Event, inv: Obj): Promise<Effect> {
  const developerId = await developerFor(tx, inv);
  if (!developerId) return { effect: 'ignored:unknown developer' };
  const row = await stateRow(tx, inv, developerId);
  if (!row) return { effect: 'ignored:no customer', developerId };
  const parent = (inv.parent as Obj | null | undefined)?.subscription_details as Obj | undefined;
  const subscriptionId = idOf(parent?.subscription) ?? idOf(inv.subscription);
  if (!subscriptionId || subscriptionId !== row.stripe_subscription_id) {
    return { effect: 'ignored:not the current subscription', developerId };
  }
  if (event.created < row.state_event_created) return { effect: 'ignored:older than the applied state', developerId };
  if (row.subscription_status === 'canceled') return { effect: 'ignored:subscription already canceled', developerId };
  if (event.type === 'invoice.payment_failed') {
    await updateSubscriptionState(tx, developerId, {
      subscriptionId,
      status: 'past_due',
      tierExpiresAt: row.tier_expires_at,
      eventCreated: event.created,
    });
    return { effect: 'status:past_due', developerId };
  }
  const lines = ((inv.lines as Obj | undefined)?.data as Obj[] | undefined) ?? [];
  const ends = lines.map((l) => (l.period as Obj | undefined)?.end).filter((x): x is number => typeof x === 'number');
  const paidThrough = ends.length ? new Date(Math.max(...ends) * 1000) : null;
  const expires =
    paidThrough && (!row.tier_expires_at || paidThrough > row.tier_expires_at) ? paidThrough : row.tier_expires_at;
  await updateSubscriptionState(tx, developerId, {
    subscriptionId,
    status: 'active',
    tierExpiresAt: expires,
    eventCreated: event.created,
  });
  const plan = await developerPlan(tx, config, developerId);
  const period = await applyPeriod(tx, developerId, invoicePeriod(inv, subscriptionId), plan);
  return withPeriod({ effect: 'status:active', developerId }, period);
}

type PeriodResult = { outcome: PeriodOutcome; account: AccountRow | null } | null;

/** Credit periods follow the subscription's period (stripe-periods.ts); an event without one leaves it alone. */
function applyPeriod(tx: DbClient, developerId: string, period: StripePeriod | null, plan: TierPlan) {
  return period ? applySubscriptionPeriod(tx, developerId, period, plan) : Promise.resolve(null);
}

/** Adds the period's outcome to an effect; the newest account row (a tier change applies after the period). */
function withPeriod(effect: Effect, period: PeriodResult): Effect {
  if (!period) return effect;
  return {
    ...effect,
    effect: `${effect.effect} period:${period.outcome}`,
    periodChanged: effect.periodChanged || period.account !== null,
    account: effect.account ?? period.account,
  };
}
