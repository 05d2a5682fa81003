import { z } from 'zod';
import { KEYED_VENDORS } from './providers.ts';
import { TIERS } from '../kernel/db/developers.ts';

export const Credits = z.object({ used: z.number(), limit: z.number(), remaining: z.number() });
export type Credits = z.infer<typeof Credits>;

export const Usage = z.object({
  credits: Credits,
  breakdown: z.object({
    tts: z.number(),
    stt: z.number(),
    llm: z.number(),
    rag: z.number(),
    video: z.number(),
    session: z.number(),
  }),
  /** Distinct requests with a metered operation in the current period (billable or not, refunds excluded). */
  requestCount: z.number(),
  period: z.object({ start: z.string(), end: z.string() }),
  /**
   * Usage done but not charged in the period, by reason (`balance`: a hard-limit balance ran out after the work was
   * done). Never waived silently: each ledger row says how much and why.
   */
  waived: z.object({
    credits: z.number(),
    byReason: z.array(z.object({ reason: z.string(), credits: z.number() })),
  }),
  /**
   * Extension: agent-test calls in the period (docs/agent-tests.md), included in `requestCount`: how many, and the
   * credits they were charged (offline runs: 0).
   */
  testTraffic: z.object({ sessions: z.number(), credits: z.number() }),
});
export type Usage = z.infer<typeof Usage>;

export const Subscription = z.object({
  tier: z.enum(TIERS),
  tierDisplay: z.string(),
  credits: Credits,
  plan: z.object({ monthlyCredits: z.number(), overageRate: z.number(), carryoverMonths: z.number() }),
  /** Absent until the developer has a payment customer. */
  paymentCustomerId: z.string().optional(),
  /** Absent while the tier does not expire. */
  tierExpiresAt: z.string().optional(),
  /** The payment processor's subscription status (active, past_due, canceled, …); absent without a subscription. */
  subscriptionStatus: z.string().optional(),
});
export type Subscription = z.infer<typeof Subscription>;

const httpUrl = z.url({ protocol: /^https?$/ }).max(2000);

export const CheckoutBody = z.object({ tier: z.enum(TIERS), successUrl: httpUrl, cancelUrl: httpUrl }).strict();
export type CheckoutBody = z.infer<typeof CheckoutBody>;

export const CheckoutResult = z.object({ url: z.string(), sessionId: z.string() });
export type CheckoutResult = z.infer<typeof CheckoutResult>;

export const PortalBody = z.object({ returnUrl: httpUrl.optional() }).strict();
export type PortalBody = z.infer<typeof PortalBody>;

export const PortalResult = z.object({ url: z.string() });

export const ProviderId = z.enum(KEYED_VENDORS as [string, ...string[]]);

export const StoreProviderKeyBody = z
  .object({
    provider: ProviderId,
    apiKey: z.string().min(8).max(4096).regex(/^\S+$/, 'must not contain whitespace'),
  })
  .strict();
export type StoreProviderKeyBody = z.infer<typeof StoreProviderKeyBody>;

/** What a stored key shows: never the key, only its last four characters. */
export const ProviderKeyItem = z.object({
  provider: z.string(),
  lastFour: z.string(),
  createdAt: z.string(),
  /** Absent until the key has been verified with the vendor. */
  verifiedAt: z.string().optional(),
});
export type ProviderKeyItem = z.infer<typeof ProviderKeyItem>;

export const ProviderKeyList = z.object({
  data: z.array(ProviderKeyItem),
  nextCursor: z.string().optional(),
  hasMore: z.boolean(),
});

export const ProviderParams = z.object({ provider: z.string().min(1).max(100) });

export const VerifyResult = z.object({
  provider: z.string(),
  valid: z.boolean(),
  verifiedAt: z.string().optional(),
  detail: z.string(),
});
export type VerifyResult = z.infer<typeof VerifyResult>;

/** Daily spending caps (credits per UTC day), for the developer and per API key; null removes one. */
export const SpendingCapsBody = z
  .object({
    dailyCredits: z.number().int().min(0).max(1e12).nullable().optional(),
    keys: z
      .array(
        z
          .object({ keyId: z.string().min(1).max(100), dailyCredits: z.number().int().min(0).max(1e12).nullable() })
          .strict(),
      )
      .max(100)
      .optional(),
  })
  .strict();
export type SpendingCapsBody = z.infer<typeof SpendingCapsBody>;

export const SpendingCaps = z.object({
  /** The developer's cap over all keys; null = none. */
  dailyCredits: z.number().nullable(),
  /** Credits spent today (UTC) by the developer, holds in flight included. */
  spentToday: z.number(),
  keys: z.array(z.object({ keyId: z.string(), dailyCredits: z.number(), spentToday: z.number() })),
  /** The UTC day the figures are for (`YYYY-MM-DD`). */
  day: z.string(),
});
export type SpendingCaps = z.infer<typeof SpendingCaps>;
