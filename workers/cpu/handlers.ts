import type { JobsOnPool } from '../../shared/queue/catalog.ts';
import type { HandlerMap } from '../../shared/queue/worker-runner.ts';
import type { Infra } from '../../shared/runtime/infra.ts';

/** Every CPU job needs a handler here; the type makes a missing one a compile error. */
export function cpuHandlers(_infra: Infra): HandlerMap<JobsOnPool<'cpu'>> {
  return {};
}
