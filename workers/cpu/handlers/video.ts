import type { JobsOn } from '../../../shared/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/queue/worker-runner.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';
import type { videoJobs } from '../../../shared/queue/jobs/video.ts';

type Names = Extract<keyof typeof videoJobs, JobsOn<'cpu'>>;

/** CPU handlers of the video area. */
export function videoCpuHandlers(_infra: Infra): HandlerMap<Names> {
  return {};
}
