import type { z } from 'zod';
import type { JobDefinition, QueueName } from './define.ts';
import { agentTestsJobs } from './jobs/agent-tests.ts';
import { billingJobs } from './jobs/billing.ts';
import { callReplayJobs } from './jobs/call-replay.ts';
import { campaignsJobs } from './jobs/campaigns.ts';
import { realtimeJobs } from './jobs/realtime.ts';
import { speechJobs } from './jobs/speech.ts';
import { videoJobs } from './jobs/video.ts';
import { webhooksJobs } from './jobs/webhooks.ts';

/**
 * The job catalog: every job the platform runs, by name. Each area declares its jobs in jobs/<area>.ts; workers
 * supply a handler map typed against this catalog, so a job without a handler fails to compile.
 */
export const catalog = {
  ...speechJobs,
  ...videoJobs,
  ...realtimeJobs,
  ...billingJobs,
  ...webhooksJobs,
  ...campaignsJobs,
  ...callReplayJobs,
  ...agentTestsJobs,
} satisfies Record<string, JobDefinition>;

export type Catalog = typeof catalog;
export type JobName = keyof Catalog;
export type JobPayload<N extends JobName> = z.infer<Catalog[N]['schema']>;
/** Names of the jobs that run on a given queue. */
export type JobsOn<Q extends QueueName> = { [N in JobName]: Catalog[N]['queue'] extends Q ? N : never }[JobName];
/** Names of the jobs that run on queues whose name matches a prefix (a pool). */
export type JobsOnPool<P extends string> = {
  [N in JobName]: Catalog[N]['queue'] extends `${P}${string}` ? N : never;
}[JobName];
