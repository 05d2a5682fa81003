import { z } from 'zod';
import type { JobDefinition } from '../define.ts';

/** Jobs of the billing area: name → payload schema, queue, timeout, retry policy. */
export const billingJobs = {
  /** Periodic (job scheduler): reports recorded overage of ended periods to Stripe as invoice items. */
  'billing.report-overage': {
    schema: z.object({}),
    queue: 'cpu' as const,
    timeoutMs: 120_000,
    attempts: 3,
    backoffMs: 10_000,
  },
} satisfies Record<string, JobDefinition>;
