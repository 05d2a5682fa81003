import type { Config } from '../../kernel/config/index.ts';
import type { QueueName } from '../../kernel/queue/define.ts';

/**
 * Concurrency of one GPU queue in this process, from VIDEO_GPU_CONCURRENCY ("avatar:2,lipsync:1,…"; pool names
 * without the `gpu-` prefix). Default 1: a neural engine saturates its device. The default CPU engines are
 * light enough to run 2 at once on a multi-core node. For workers/gpu/role.ts: `concurrency: gpuConcurrency(c, q)`.
 */
export function gpuConcurrency(config: Pick<Config, 'VIDEO_GPU_CONCURRENCY'>, queue: QueueName): number {
  const pool = queue.replace(/^gpu-/, '');
  for (const pair of config.VIDEO_GPU_CONCURRENCY.split(',')) {
    const [name, n] = pair.split(':');
    if (name === pool && Number(n) >= 1) return Math.min(16, Number(n));
  }
  return 1;
}
