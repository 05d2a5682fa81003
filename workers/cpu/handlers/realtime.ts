import type { JobsOn } from '../../../shared/queue/catalog.ts';
import type { realtimeJobs } from '../../../shared/queue/jobs/realtime.ts';
import type { HandlerMap, JobHandler } from '../../../shared/queue/worker-runner.ts';
import { dialTask } from '../../../shared/realtime/outbound.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';

type Names = Extract<keyof typeof realtimeJobs, JobsOn<'cpu'>>;

/** CPU handlers of the realtime area: the outbound-call dispatcher. */
export function realtimeCpuHandlers(
  infra: Infra,
): HandlerMap<Names> & { 'realtime.dial': JobHandler<'realtime.dial'> } {
  return {
    'realtime.dial': (payload, ctx) => dialTask(infra, payload.taskId, ctx.signal, ctx.log),
  };
}
