import { executeTestRun } from '../../../shared/domains/agent-tests/execute.ts';
import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { agentTestsJobs } from '../../../shared/kernel/queue/jobs/agent-tests.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';

type Names = Extract<keyof typeof agentTestsJobs, JobsOn<'cpu'>>;

/**
 * CPU handler of agent test runs. A run's calls go to a private api + realtime pair pointed at the simulated STT
 * and scripted LLM; scripts/platform.ts is the one place that loads roles, so it is loaded here on demand (as the
 * CLI does), and only when a run comes.
 */
export function agentTestsCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'agent-tests.run': async (p, ctx) => {
      const { startPlatform } = await import('../../../scripts/platform.ts');
      await executeTestRun(infra, p.runId, {
        startPlatform: (config, log) => startPlatform(config, log, ['api', 'realtime']),
        signal: ctx.signal,
        log: ctx.log,
        progress: (f) => void ctx.progress(f).catch(() => {}),
      });
    },
  };
}
