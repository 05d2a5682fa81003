import { z } from 'zod';
import { STT_PROVIDERS, TTS_PROVIDERS } from '../../contracts/providers.ts';
import { ANALYSIS_PROVIDERS, AVATAR_PROVIDERS, GENERATE_PROVIDERS, LIPSYNC_PROVIDERS } from '../../contracts/video.ts';

/** POST /v1/estimate: what a planned operation would cost the caller, before it runs. */
export const EstimateBody = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('call'),
      agentId: z.string().min(1).max(60),
      minutes: z
        .number()
        .positive()
        .max(24 * 60)
        .default(1),
      channel: z.enum(['twilio', 'direct']).default('twilio'),
    })
    .strict(),
  z
    .object({
      kind: z.literal('campaign'),
      agentId: z.string().min(1).max(60),
      /** How many recipients the campaign would call (one answered call each). */
      recipients: z.number().int().min(1).max(100_000),
      /** Expected connected minutes of each call. */
      minutesPerCall: z.number().positive().max(240).default(1),
    })
    .strict(),
  z
    .object({
      kind: z.literal('synthesis'),
      text: z.string().min(1).max(10_000).optional(),
      characters: z.number().int().min(1).max(10_000).optional(),
      provider: z.enum(TTS_PROVIDERS).default('default'),
    })
    .strict()
    .refine((b) => (b.text === undefined) !== (b.characters === undefined), {
      message: 'give text or characters (one of them)',
      path: ['text'],
    }),
  z
    .object({
      kind: z.literal('transcription'),
      seconds: z
        .number()
        .positive()
        .max(24 * 3600),
      provider: z.enum(STT_PROVIDERS).default('default'),
    })
    .strict(),
  z
    .object({
      kind: z.literal('video'),
      type: z.enum(['generate', 'avatar', 'lipsync', 'dub', 'analyze']),
      seconds: z.number().positive().max(3600),
      provider: z
        .enum([
          ...new Set([...GENERATE_PROVIDERS, ...AVATAR_PROVIDERS, ...LIPSYNC_PROVIDERS, ...ANALYSIS_PROVIDERS]),
        ] as [string, ...string[]])
        .optional()
        .describe('The engine (for dub: the lip-sync engine); a vendor engine with your own key is not billed'),
    })
    .strict(),
]);
export type EstimateBody = z.infer<typeof EstimateBody>;

export const EstimateItem = z.object({
  category: z.string(),
  operation: z.string(),
  units: z.number(),
  unit: z.string(),
  provider: z.string(),
  /** False when your own provider key (header or stored) or a free local engine would serve it. */
  billable: z.boolean(),
  credits: z.number(),
});

export const Estimate = z.object({
  kind: z.string(),
  tier: z.string(),
  items: z.array(EstimateItem),
  /** Credits the operation is expected to cost (0 when nothing is billable). */
  credits: z.number(),
  /** Credits left in the period now, and whether they cover the estimate (a tier with overage always runs). */
  remaining: z.number(),
  sufficient: z.boolean(),
  /** The part past the period's credits on a tier with an overage rate, in credits and USD; absent when none. */
  overage: z.object({ credits: z.number(), usd: z.number() }).optional(),
  /** What is left today under the tighter daily spending cap (developer or this API key); absent without one. */
  dailyCap: z.object({ cap: z.number(), remaining: z.number() }).optional(),
  /**
   * A campaign estimate only (absent otherwise): each call's estimate, and how many of the calls the balance and
   * today's daily caps fund now (the rest wait for the next day or for credits: docs/campaigns.md).
   */
  campaign: z.object({ recipients: z.number(), creditsPerCall: z.number(), callsFundedNow: z.number() }).optional(),
  /** The assumptions behind a call estimate (a call's usage depends on the conversation); absent otherwise. */
  assumptions: z.record(z.string(), z.number()).optional(),
});
export type Estimate = z.infer<typeof Estimate>;
