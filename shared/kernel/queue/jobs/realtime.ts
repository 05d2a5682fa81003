import { z } from 'zod';
import { defineJob, type JobDefinition } from '../define.ts';

/** Jobs of the realtime area: name → payload schema, queue, timeout, retry policy. */
export const realtimeJobs = {
  /**
   * Outbound call dispatcher: places the call of one rt_outbound_tasks row through the Twilio REST API. Idempotent:
   * a task that already has a CallSid is not dialled again.
   */
  'realtime.dial': defineJob({
    schema: z.object({ taskId: z.string().min(1) }),
    queue: 'cpu',
    timeoutMs: 30_000,
    attempts: 3,
    backoffMs: 2000,
  }),
  /**
   * Post-call analysis of one ended session (issue #33): the agent's LLM or the local rule-based extractor, stored
   * on the session, and one `call.analyzed` webhook. Idempotent (job id `call-analyze-<session>`, a conditional
   * store and a unique webhook source); the last attempt stores a failed analysis rather than throwing.
   */
  'call.analyze': defineJob({
    schema: z.object({ sessionId: z.string().min(1).max(100) }),
    queue: 'cpu',
    timeoutMs: 120_000,
    attempts: 3,
    backoffMs: 5000,
  }),
} satisfies Record<string, JobDefinition>;
