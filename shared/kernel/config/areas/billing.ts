import { z } from 'zod';

const credits = () => z.coerce.number().int().min(0).max(1_000_000_000_000);
const rate = () => z.coerce.number().min(0).max(1_000_000);
const months = () => z.coerce.number().int().min(0).max(120);

/** Environment variables of the billing area (merged into EnvSchema; documented in docs/billing.md). */
export const billingEnv = {
  TIER_STARTER_MONTHLY_CREDITS: credits()
    .default(50_000)
    .describe('Credits granted each billing period on the starter tier.'),
  TIER_STARTER_OVERAGE_RATE: rate()
    .default(0)
    .describe('Starter overage price in USD per 1,000 credits beyond the limit; 0 = hard limit (402 when out).'),
  TIER_STARTER_CARRYOVER_MONTHS: months()
    .default(0)
    .describe('Starter: unused credits carried into the next period, capped at this many months of credits.'),
  TIER_PRO_MONTHLY_CREDITS: credits().default(200_000).describe('Credits granted each billing period on the pro tier.'),
  TIER_PRO_OVERAGE_RATE: rate()
    .default(0.6)
    .describe('Pro overage price in USD per 1,000 credits beyond the limit; 0 = hard limit (402 when out).'),
  TIER_PRO_CARRYOVER_MONTHS: months()
    .default(1)
    .describe('Pro: unused credits carried into the next period, capped at this many months of credits.'),
  TIER_SCALE_MONTHLY_CREDITS: credits()
    .default(1_000_000)
    .describe('Credits granted each billing period on the scale tier.'),
  TIER_SCALE_OVERAGE_RATE: rate()
    .default(0.5)
    .describe('Scale overage price in USD per 1,000 credits beyond the limit; 0 = hard limit (402 when out).'),
  TIER_SCALE_CARRYOVER_MONTHS: months()
    .default(3)
    .describe('Scale: unused credits carried into the next period, capped at this many months of credits.'),
  CREDIT_WEIGHTS: z
    .string()
    .regex(/^([\w.-]+:\d+(\.\d+)?)(,[\w.-]+:\d+(\.\d+)?)*$/)
    .optional()
    .describe(
      'Overrides of the credit-weight table, "operation:creditsPerUnit,…" (e.g. "synthesize:1,transcribe:5"); ' +
        'a category name (tts, stt, llm, rag, video, session) overrides that category default.',
    ),
  USAGE_CACHE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(1000)
    .describe('How long a process reuses a usage snapshot for the X-Usage-* headers before re-reading Redis.'),
  OVERAGE_REPORT_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(10_000)
    .max(86_400_000)
    .default(15 * 60_000)
    .describe('How often the CPU pool reports recorded overage of ended periods to Stripe as invoice items.'),
  PROVIDER_KEYS_ENCRYPTION_KEYS: z
    .string()
    .regex(/^[\w-]+:[A-Za-z0-9+/=_-]+(,[\w-]+:[A-Za-z0-9+/=_-]+)*$/)
    .optional()
    .describe(
      'Master keys for stored provider keys (AES-256-GCM), "id:base64-32-bytes,…": the first encrypts, all ' +
        'decrypt (rotation: put the new key first, keep the old one until re-encryption is done). Unset uses a ' +
        'published development key, refused when NODE_ENV=production.',
    ),
  STRIPE_SECRET_KEY: z
    .string()
    .min(1)
    .optional()
    .describe('Stripe secret API key (sk_test_… / sk_live_…). Unset: the billing routes answer 503.'),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .min(1)
    .optional()
    .describe('Signing secret (whsec_…) of the Stripe webhook endpoint POST /webhooks/stripe.'),
  STRIPE_PRICE_STARTER: z.string().min(1).optional().describe('Stripe recurring price id of the starter tier.'),
  STRIPE_PRICE_PRO: z.string().min(1).optional().describe('Stripe recurring price id of the pro tier.'),
  STRIPE_PRICE_SCALE: z.string().min(1).optional().describe('Stripe recurring price id of the scale tier.'),
  STRIPE_API_BASE: z
    .url()
    .optional()
    .describe('Override of the Stripe API address (protocol, host, port), e.g. a local double in tests.'),
} satisfies z.ZodRawShape;
