import { z } from 'zod';
import type { JobDefinition } from '../define.ts';

/**
 * Webhook delivery: one BullMQ job per attempt (`<message id>:<attempt>`), so the Standard Webhooks schedule
 * (now, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h) is exact and each attempt is idempotent. A failed
 * attempt records itself in webhook_deliveries and enqueues the next with its delay; the handler never throws
 * for a receiver's failure.
 */
export const webhooksJobs = {
  'webhook.deliver': {
    schema: z.object({ messageId: z.string().min(1), attempt: z.int().min(1) }),
    queue: 'cpu' as const,
    timeoutMs: 60_000,
    attempts: 3,
    backoffMs: 1000,
  },
} satisfies Record<string, JobDefinition>;
