import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { realtimeJobs } from '../../../shared/kernel/queue/jobs/realtime.ts';
import type { HandlerMap, JobHandler } from '../../../shared/kernel/queue/worker-runner.ts';
import { dialTask } from '../../../shared/domains/realtime/outbound.ts';
import type { Infra } from '../../../shared/platform/infra.ts';

type Names = Extract<keyof typeof realtimeJobs, JobsOn<'cpu'>>;

/** CPU handlers of the realtime area: the outbound-call dispatcher. */
export function realtimeCpuHandlers(
  infra: Infra,
): HandlerMap<Names> & { 'realtime.dial': JobHandler<'realtime.dial'> } {
  return {
    'realtime.dial': (payload, ctx) => dialTask(infra, payload.taskId, ctx.signal, ctx.log),
  };
}
