import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { realtimeJobs } from '../../../shared/kernel/queue/jobs/realtime.ts';
import type { HandlerMap, JobHandler } from '../../../shared/kernel/queue/worker-runner.ts';
import { dialTask } from '../../../shared/domains/realtime/outbound.ts';
import { analyzeCall } from '../../../shared/domains/realtime/analysis/analyze-call.ts';
import type { Infra } from '../../../shared/platform/infra.ts';

type Names = Extract<keyof typeof realtimeJobs, JobsOn<'cpu'>>;

/** CPU handlers of the realtime area: the outbound-call dispatcher and the post-call analysis. */
export function realtimeCpuHandlers(
  infra: Infra,
): HandlerMap<Names> & { 'realtime.dial': JobHandler<'realtime.dial'>; 'call.analyze': JobHandler<'call.analyze'> } {
  return {
    'realtime.dial': (payload, ctx) => dialTask(infra, payload.taskId, ctx.signal, ctx.log),
    'call.analyze': async (payload, ctx) => {
      await analyzeCall(infra, payload.sessionId, {
        signal: ctx.signal,
        log: ctx.log,
        final: ctx.attempt >= ctx.attemptsAllowed,
      });
    },
  };
}
