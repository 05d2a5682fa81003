import type { JobDefinition } from '../define.ts';

/** Jobs of the billing area: name → payload schema, queue, timeout, retry policy. */
export const billingJobs = {} satisfies Record<string, JobDefinition>;
