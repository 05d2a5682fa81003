import type { Infra } from '../../shared/platform/infra.ts';
import { runWorker, type RunningWorker } from '../../shared/kernel/queue/worker-runner.ts';
import type { StartPrivatePlatform } from '../../shared/domains/agent-tests/execute.ts';
import { cpuHandlers } from './handlers.ts';

/**
 * The CPU pool: transcription, ffmpeg muxing, dubbing steps, ingest, webhooks, outbound-call dispatch, agent test
 * runs and call replays. `privatePlatform` starts the private api + realtime pair those two play their calls on;
 * the composition root (scripts/platform.ts) passes it in, since a role may not load other roles itself.
 */
export function startCpuWorkers(infra: Infra, privatePlatform?: StartPrivatePlatform): RunningWorker[] {
  return [
    runWorker('cpu', cpuHandlers(infra, privatePlatform), {
      redis: infra.bullRedis,
      prefix: infra.config.REDIS_PREFIX,
      stalledIntervalMs: infra.config.WORKER_STALLED_INTERVAL_MS,
      concurrency: infra.config.WORKER_CPU_CONCURRENCY,
      log: infra.log.child({ role: 'worker-cpu' }),
    }),
  ];
}
