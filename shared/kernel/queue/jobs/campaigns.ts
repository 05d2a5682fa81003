import { z } from 'zod';
import { defineJob, type JobDefinition } from '../define.ts';

/** Jobs of outbound campaigns (shared/domains/campaigns/): dispatcher, dialler, hang-up, settlement. All
 *  idempotent. */
export const campaignsJobs = {
  /** Claims due recipients up to the campaign's free slots and enqueues a dial per attempt. */
  'campaign.dispatch': defineJob({
    schema: z.object({ campaignId: z.string().min(1) }),
    queue: 'cpu',
    timeoutMs: 30_000,
    attempts: 3,
    backoffMs: 1000,
  }),
  /** Places one claimed attempt through Twilio's REST API, at most once (job id = attempt id). */
  'campaign.dial': defineJob({
    schema: z.object({ callId: z.string().min(1) }),
    queue: 'cpu',
    timeoutMs: 30_000,
    attempts: 3,
    backoffMs: 2000,
  }),
  /** Hangs up a live attempt of a canceled campaign through Twilio's REST API (job id `hangup-<attempt>`). */
  'campaign.hangup': defineJob({
    schema: z.object({ callId: z.string().min(1) }),
    queue: 'cpu',
    timeoutMs: 30_000,
    attempts: 5,
    backoffMs: 1000,
  }),
  /** Records an ended attempt's outcome, retries or closes its recipient, sends the webhook. Waits out a session
   *  still closing: 8 attempts from 500 ms doubling ≈ a minute. */
  'campaign.settle': defineJob({
    schema: z.object({ callId: z.string().min(1) }),
    queue: 'cpu',
    timeoutMs: 30_000,
    attempts: 8,
    backoffMs: 500,
  }),
} satisfies Record<string, JobDefinition>;
