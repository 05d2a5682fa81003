import type { JobsOnPool } from '../../../shared/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/queue/worker-runner.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';

/** GPU handlers (avatar, lip-sync, analysis, generation). */
export function videoGpuHandlers(_infra: Infra): HandlerMap<JobsOnPool<'gpu-'>> {
  return {};
}
