import type { JobDefinition } from '../define.ts';

/** Jobs of the speech area: name → payload schema, queue, timeout, retry policy. */
export const speechJobs = {} satisfies Record<string, JobDefinition>;
