import { z } from 'zod';
import { PhoneNumber } from './agents.ts';
import { SessionEndReason } from './sessions.ts';

/** A recipient's variables fill `{{name}}` in the agent's prompt and first message, as an instance's context does. */
const Variables = z
  .record(
    z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'variable names are 1-64 letters, digits, "_", "-", "."'),
    z.union([z.string().max(2000), z.number(), z.boolean()]),
  )
  .refine((v) => Object.keys(v).length <= 50, 'at most 50 variables per recipient');

/** An IANA time zone the runtime knows (the database converts with the same names). */
export const TimeZone = z
  .string()
  .min(1)
  .max(64)
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  }, 'timeZone must be an IANA time zone such as "America/New_York"');

const ClockTime = z.string().regex(/^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'a local time "HH:MM" (00:00-24:00)');

/** Outcomes a retry may follow. */
export const RetryableOutcome = z.enum(['no_answer', 'busy', 'voicemail']);

/**
 * A recipient's outcome: `answered` (a person, or `answeredBy` unknown, talked to the agent), `voicemail_left` (a
 * machine answered and the agent left its message), `voicemail` (a machine answered, no message), `no_answer`,
 * `busy`, `failed` (with `outcomeReason`), `transferred` (the agent handed the call to a person), `canceled`.
 */
export const CallOutcome = z.enum([
  'answered',
  'voicemail_left',
  'voicemail',
  'no_answer',
  'busy',
  'failed',
  'transferred',
  'canceled',
]);
export type CallOutcome = z.infer<typeof CallOutcome>;

export const CreateCampaignBody = z
  .object({
    agentId: z.string().min(1).max(60),
    name: z.string().max(200).optional(),
    /** The caller id: a Twilio number of the account. */
    from: PhoneNumber,
    recipients: z
      .array(
        z
          .object({
            phone: PhoneNumber,
            variables: Variables.default({}),
            /** Overrides the campaign's timeZone for this recipient's calling hours. */
            timeZone: TimeZone.optional(),
          })
          .strict(),
      )
      .min(1)
      .max(5000),
    maxConcurrency: z.number().int().min(1).max(1000).default(1),
    /** Local time of each recipient; an end before the start spans midnight. Default: any time. */
    callingHours: z.object({ start: ClockTime, end: ClockTime }).strict().default({ start: '00:00', end: '24:00' }),
    timeZone: TimeZone.default('UTC'),
    retry: z
      .object({
        /** Attempts per recipient in all, the first included. */
        maxAttempts: z.number().int().min(1).max(10).default(3),
        /** Seconds before the second attempt; each later one waits twice as long as the one before. */
        backoff: z
          .number()
          .int()
          .min(0)
          .max(7 * 86400)
          .default(1800),
        on: z.array(RetryableOutcome).max(3).default(['no_answer', 'busy', 'voicemail']),
      })
      .strict()
      .default({ maxAttempts: 3, backoff: 1800, on: ['no_answer', 'busy', 'voicemail'] }),
    /** Per-call limits passed to every session of the campaign (over the agent's defaults). */
    maxDurationSeconds: z
      .number()
      .int()
      .min(10)
      .max(4 * 3600)
      .optional(),
    maxCredits: z.number().positive().max(1_000_000).optional(),
    /**
     * Notified (Standard Webhooks) after every finished call (`campaign.call.finished`) and once per pause for
     * money (`campaign.paused`).
     */
    webhookUrl: z.url().max(2000).optional(),
  })
  .strict();
export type CreateCampaignBody = z.infer<typeof CreateCampaignBody>;

export const CampaignStatus = z.enum(['active', 'paused', 'canceled', 'completed']);

const Counts = z.object({
  total: z.number(),
  pending: z.number(),
  calling: z.number(),
  done: z.number(),
  outcomes: z.record(z.string(), z.number()),
});

export const CampaignWaiting = z.enum(['daily_cap', 'balance']);

export const Campaign = z.object({
  id: z.string(),
  agentId: z.string(),
  /** Absent when none was given. */
  name: z.string().optional(),
  from: z.string(),
  status: CampaignStatus,
  maxConcurrency: z.number(),
  callingHours: z.object({ start: z.string(), end: z.string() }),
  timeZone: z.string(),
  retry: z.object({ maxAttempts: z.number(), backoff: z.number(), on: z.array(z.string()) }),
  maxDurationSeconds: z.number().nullable(),
  maxCredits: z.number().nullable(),
  webhookUrl: z.string().optional(),
  counts: Counts,
  /**
   * Why no call is being placed now: the daily spending cap or the balance cannot fund the next call's first
   * minute (docs/campaigns.md, "Money before dialling"). Absent while the campaign dials.
   */
  waiting: CampaignWaiting.optional(),
  createdAt: z.string(),
  /** Absent until the campaign completes. */
  completedAt: z.string().optional(),
});
export type Campaign = z.infer<typeof Campaign>;

export const CampaignCall = z.object({
  id: z.string(),
  attempt: z.number(),
  /** Twilio's CallStatus (`claimed`/`dialing` before Twilio has it). */
  status: z.string(),
  /** Each absent until known (strings in this API are strings or absent, never null). */
  callSid: z.string().optional(),
  sessionId: z.string().optional(),
  answeredBy: z.string().optional(),
  outcome: CallOutcome.optional(),
  /** How the attempt's session ended (docs/realtime.md, "End reasons"); absent until it has. */
  endReason: SessionEndReason.optional(),
  error: z.string().optional(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
});

export const CampaignRecipient = z.object({
  id: z.string(),
  phone: z.string(),
  variables: z.record(z.string(), z.unknown()),
  /** Absent when the campaign's time zone applies. */
  timeZone: z.string().optional(),
  state: z.enum(['pending', 'calling', 'done']),
  outcome: CallOutcome.optional(),
  outcomeReason: z.string().optional(),
  answeredBy: z.string().optional(),
  /** Present while the recipient is pending. */
  nextAttemptAt: z.string().optional(),
  /** A pending recipient of a campaign waiting for money: why it is not dialled (absent otherwise). */
  waiting: CampaignWaiting.optional(),
  attempts: z.array(CampaignCall),
});
export type CampaignRecipient = z.infer<typeof CampaignRecipient>;

export const CampaignDetail = Campaign.extend({ recipients: z.array(CampaignRecipient) });

export const CampaignIdParams = z.object({ id: z.string().min(1).max(60) });
export const CallIdParams = z.object({ callId: z.string().min(1).max(60) });
