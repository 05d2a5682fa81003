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
} satisfies Record<string, JobDefinition>;
