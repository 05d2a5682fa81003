import type { JobDefinition } from '../define.ts';

/** Jobs of the webhooks area: name → payload schema, queue, timeout, retry policy. */
export const webhooksJobs = {} satisfies Record<string, JobDefinition>;
