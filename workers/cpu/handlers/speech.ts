import type { JobsOn } from '../../../shared/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/queue/worker-runner.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';
import type { speechJobs } from '../../../shared/queue/jobs/speech.ts';

type Names = Extract<keyof typeof speechJobs, JobsOn<'cpu'>>;

/** CPU handlers of the speech area. */
export function speechCpuHandlers(_infra: Infra): HandlerMap<Names> {
  return {};
}
