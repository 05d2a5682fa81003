import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import type { callReplayJobs } from '../../../shared/kernel/queue/jobs/call-replay.ts';
import { runCallReplayJob } from '../../../shared/domains/agent-tests/replay/job.ts';
import type { StartPrivatePlatform } from '../../../shared/domains/agent-tests/execute.ts';
import { noPrivatePlatform } from './private-platform.ts';

type Names = Extract<keyof typeof callReplayJobs, JobsOn<'cpu-tests'>>;

/**
 * CPU handler of call replays: a replay's call goes to a private api + realtime pair with the simulated STT,
 * started by `privatePlatform` (the composition root's, passed in with the role, as for agent test runs).
 */
export function callReplayCpuHandlers(infra: Infra, privatePlatform?: StartPrivatePlatform): HandlerMap<Names> {
  return {
    'call-replay.run': async (p, ctx) => {
      await runCallReplayJob(infra, p.replayId, {
        startPlatform: privatePlatform ?? noPrivatePlatform,
        log: ctx.log,
        signal: ctx.signal,
      });
    },
  };
}
