import type { JobDefinition } from '../define.ts';

/** Jobs of the video area: name → payload schema, queue, timeout, retry policy. */
export const videoJobs = {} satisfies Record<string, JobDefinition>;
