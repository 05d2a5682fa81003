import type { Infra } from '../../shared/platform/infra.ts';
import { runWorker, type RunningWorker } from '../../shared/kernel/queue/worker-runner.ts';
import { cpuHandlers } from './handlers.ts';

/** The CPU pool: transcription, ffmpeg muxing, dubbing steps, ingest, webhooks, outbound-call dispatch. */
export function startCpuWorkers(infra: Infra): RunningWorker[] {
  return [
    runWorker('cpu', cpuHandlers(infra), {
      redis: infra.bullRedis,
      prefix: infra.config.REDIS_PREFIX,
      stalledIntervalMs: infra.config.WORKER_STALLED_INTERVAL_MS,
      concurrency: infra.config.WORKER_CPU_CONCURRENCY,
      log: infra.log.child({ role: 'worker-cpu' }),
    }),
  ];
}
