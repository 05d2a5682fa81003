import type { JobsOn } from '../../../shared/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/queue/worker-runner.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';
import type { realtimeJobs } from '../../../shared/queue/jobs/realtime.ts';

type Names = Extract<keyof typeof realtimeJobs, JobsOn<'cpu'>>;

/** CPU handlers of the realtime area. */
export function realtimeCpuHandlers(_infra: Infra): HandlerMap<Names> {
  return {};
}
