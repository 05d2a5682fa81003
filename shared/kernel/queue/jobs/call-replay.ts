import { z } from 'zod';
import { defineJob, type JobDefinition } from '../define.ts';

/**
 * Call replay (shared/domains/agent-tests/replay/): plays a recorded call's caller turns through the agent in real
 * time, so the job lasts about as long as the call did. Not retried: a second attempt would place a second call;
 * a replay that fails says why and can be asked for again.
 */
export const callReplayJobs = {
  'call-replay.run': defineJob({
    schema: z.object({ replayId: z.string().min(1) }),
    queue: 'cpu-tests',
    timeoutMs: 45 * 60_000,
    attempts: 1,
    backoffMs: 1000,
  }),
} satisfies Record<string, JobDefinition>;
