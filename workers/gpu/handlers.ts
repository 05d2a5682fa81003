import type { JobsOnPool } from '../../shared/kernel/queue/catalog.ts';
import type { HandlerMap } from '../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { videoGpuHandlers } from './handlers/video.ts';

/** Every GPU job needs a handler here; the type makes a missing one a compile error. */
export function gpuHandlers(infra: Infra): HandlerMap<JobsOnPool<'gpu-'>> {
  return { ...videoGpuHandlers(infra) };
}
