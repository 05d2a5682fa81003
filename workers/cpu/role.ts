import { buildEngines } from '../../shared/engines/boot.ts';
import type { Infra } from '../../shared/runtime/infra.ts';
import { runWorker, type RunningWorker } from '../../shared/queue/worker-runner.ts';
import { cpuHandlers } from './handlers.ts';

/** The CPU pool: transcription, ffmpeg muxing, dubbing steps, ingest, webhooks, outbound-call dispatch. */
export function startCpuWorkers(infra: Infra): RunningWorker[] {
  // Engines are built (and their configuration checked) before any job is taken.
  infra.log.info({ engines: buildEngines(infra) }, 'engines ready');
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
