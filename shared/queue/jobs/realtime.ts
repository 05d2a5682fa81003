import type { JobDefinition } from '../define.ts';

/** Jobs of the realtime area: name → payload schema, queue, timeout, retry policy. */
export const realtimeJobs = {} satisfies Record<string, JobDefinition>;
