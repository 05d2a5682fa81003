import { executeTestRun, type StartPrivatePlatform } from '../../../shared/domains/agent-tests/execute.ts';
import { noPrivatePlatform } from './private-platform.ts';
import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { agentTestsJobs } from '../../../shared/kernel/queue/jobs/agent-tests.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';

type Names = Extract<keyof typeof agentTestsJobs, JobsOn<'cpu-tests'>>;

/**
 * CPU handler of agent test runs. A run's calls go to a private api + realtime pair pointed at the simulated STT
 * and scripted LLM, started by `privatePlatform` (the composition root's, passed in with the role).
 */
export function agentTestsCpuHandlers(infra: Infra, privatePlatform?: StartPrivatePlatform): HandlerMap<Names> {
  return {
    'agent-tests.run': async (p, ctx) => {
      await executeTestRun(infra, p.runId, {
        startPlatform: privatePlatform ?? noPrivatePlatform,
        signal: ctx.signal,
        log: ctx.log,
        progress: (f) => void ctx.progress(f).catch(() => {}),
      });
    },
  };
}
