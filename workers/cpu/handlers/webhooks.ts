import type { JobsOn } from '../../../shared/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/queue/worker-runner.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';
import type { webhooksJobs } from '../../../shared/queue/jobs/webhooks.ts';

type Names = Extract<keyof typeof webhooksJobs, JobsOn<'cpu'>>;

/** CPU handlers of the webhooks area. */
export function webhooksCpuHandlers(_infra: Infra): HandlerMap<Names> {
  return {};
}
