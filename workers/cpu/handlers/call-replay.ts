import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import type { callReplayJobs } from '../../../shared/kernel/queue/jobs/call-replay.ts';
import { runCallReplayJob } from '../../../shared/domains/agent-tests/replay/job.ts';

type Names = Extract<keyof typeof callReplayJobs, JobsOn<'cpu'>>;

/**
 * CPU handler of call replays: a replay's call goes to a private api + realtime pair with the simulated STT;
 * scripts/platform.ts is the one place that loads roles, so it is loaded here on demand, only when a replay comes
 * (as the agent-test runs' handler does).
 */
export function callReplayCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'call-replay.run': async (p, ctx) => {
      const { startPlatform } = await import('../../../scripts/platform.ts');
      await runCallReplayJob(infra, p.replayId, {
        startPlatform: (config, log) => startPlatform(config, log, ['api', 'realtime']),
        log: ctx.log,
        signal: ctx.signal,
      });
    },
  };
}
