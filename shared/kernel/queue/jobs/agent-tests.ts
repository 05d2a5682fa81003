import { z } from 'zod';
import { defineJob, type JobDefinition } from '../define.ts';

/** Jobs of agent tests (shared/domains/agent-tests/). */
export const agentTestsJobs = {
  /**
   * Runs one test run's scenarios as calls (job id = run id). A scenario takes tens of seconds, so a run of many
   * takes minutes; a retried attempt resumes after the last scenario whose result is stored.
   */
  'agent-tests.run': defineJob({
    schema: z.object({ runId: z.string().min(1) }),
    queue: 'cpu-tests',
    timeoutMs: 60 * 60_000,
    attempts: 2,
    backoffMs: 5000,
  }),
} satisfies Record<string, JobDefinition>;
