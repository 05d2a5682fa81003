import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import type { callReplayJobs } from '../../../shared/kernel/queue/jobs/call-replay.ts';
import { runCallReplayJob } from '../../../shared/domains/agent-tests/replay/job.ts';

type Names = Extract<keyof typeof callReplayJobs, JobsOn<'cpu'>>;

/** CPU handler of call replays: one replay per job, run against the platform's own api and realtime roles. */
export function callReplayCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'call-replay.run': (p, ctx) => runCallReplayJob(infra, p.replayId, ctx.signal),
  };
}
