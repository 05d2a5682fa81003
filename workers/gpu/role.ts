import { QUEUES, type QueueName } from '../../shared/kernel/queue/define.ts';
import { runWorker, type RunningWorker } from '../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { gpuConcurrency } from '../../shared/domains/video/gpu-concurrency.ts';
import { gpuHandlers } from './handlers.ts';

/**
 * One process per GPU (GPU_DEVICE); GPU_POOLS picks which GPU queues it serves (a Deployment per pool in the
 * cluster, all of them on a single machine). Concurrency per engine from VIDEO_GPU_CONCURRENCY, 1 by default: a
 * neural engine saturates its device.
 */
export function startGpuWorkers(infra: Infra): RunningWorker[] {
  const wanted = infra.config.GPU_POOLS.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const queues = QUEUES.filter(
    (q): q is QueueName => q.startsWith('gpu-') && (wanted.length === 0 || wanted.includes(q.slice(4))),
  );
  const handlers = gpuHandlers(infra);
  return queues.map((q) =>
    runWorker(q, handlers, {
      redis: infra.bullRedis,
      prefix: infra.config.REDIS_PREFIX,
      stalledIntervalMs: infra.config.WORKER_STALLED_INTERVAL_MS,
      concurrency: gpuConcurrency(infra.config, q),
      log: infra.log.child({ role: 'worker-gpu', device: infra.config.GPU_DEVICE }),
    }),
  );
}
