import type { Config } from '../../kernel/config/index.ts';
import { TIERS, type Tier } from '../../kernel/db/developers.ts';

export { TIERS, type Tier };

/** The plan of a tier: what a period grants and what happens past it. Rate limits live in config.rateLimits. */
export interface TierPlan {
  tier: Tier;
  display: string;
  monthlyCredits: number;
  /** USD per 1,000 credits beyond the limit; 0 means a hard limit (402 `insufficient_credits`). */
  overageRate: number;
  /** Unused credits carry into the next period, capped at carryoverMonths × monthlyCredits. */
  carryoverMonths: number;
  /** Stripe recurring price of the tier, when Stripe is configured. */
  stripePrice: string | undefined;
}

const DISPLAY: Record<Tier, string> = { starter: 'Starter', pro: 'Pro', scale: 'Scale' };

const memo = new WeakMap<Config, Record<Tier, TierPlan>>();

export function tierPlans(config: Config): Record<Tier, TierPlan> {
  let plans = memo.get(config);
  if (!plans) {
    plans = {
      starter: {
        tier: 'starter',
        display: DISPLAY.starter,
        monthlyCredits: config.TIER_STARTER_MONTHLY_CREDITS,
        overageRate: config.TIER_STARTER_OVERAGE_RATE,
        carryoverMonths: config.TIER_STARTER_CARRYOVER_MONTHS,
        stripePrice: config.STRIPE_PRICE_STARTER,
      },
      pro: {
        tier: 'pro',
        display: DISPLAY.pro,
        monthlyCredits: config.TIER_PRO_MONTHLY_CREDITS,
        overageRate: config.TIER_PRO_OVERAGE_RATE,
        carryoverMonths: config.TIER_PRO_CARRYOVER_MONTHS,
        stripePrice: config.STRIPE_PRICE_PRO,
      },
      scale: {
        tier: 'scale',
        display: DISPLAY.scale,
        monthlyCredits: config.TIER_SCALE_MONTHLY_CREDITS,
        overageRate: config.TIER_SCALE_OVERAGE_RATE,
        carryoverMonths: config.TIER_SCALE_CARRYOVER_MONTHS,
        stripePrice: config.STRIPE_PRICE_SCALE,
      },
    };
    memo.set(config, plans);
  }
  return plans;
}

export function isTier(v: unknown): v is Tier {
  return typeof v === 'string' && (TIERS as readonly string[]).includes(v);
}

/** The plan of a tier name as stored on a developer; an unknown name falls back to starter. */
export function planFor(config: Config, tier: string): TierPlan {
  const plans = tierPlans(config);
  return isTier(tier) ? plans[tier] : plans.starter;
}
