import type { z } from 'zod';

/**
 * Worker pools. CPU workers run anywhere; each GPU pool is its own Deployment with its own queue. `cpu-tests` is
 * the CPU pool's second queue: agent test runs and call replays (minutes of real-time calls each) have their own
 * worker and concurrency there (WORKER_TESTS_CONCURRENCY), so transcriptions, dials, webhooks and video on `cpu`
 * never wait behind them.
 */
export const QUEUES = ['cpu', 'cpu-tests', 'gpu-avatar', 'gpu-lipsync', 'gpu-analysis', 'gpu-generate'] as const;
export type QueueName = (typeof QUEUES)[number];
export type Pool = 'cpu' | 'gpu';

export function poolOf(queue: QueueName): Pool {
  return queue.startsWith('gpu-') ? 'gpu' : 'cpu';
}

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  schema: S;
  queue: QueueName;
  /** Wall-clock limit of one attempt; the handler's AbortSignal fires when it is reached. */
  timeoutMs: number;
  /** Total attempts, the first included. Handlers must be idempotent: a stalled job runs again. */
  attempts: number;
  backoffMs: number;
}

/** Keeps the literal queue name in the type, so pool-typed handler maps (JobsOnPool) see each job. */
export function defineJob<S extends z.ZodType, Q extends QueueName>(
  def: JobDefinition<S> & { queue: Q },
): JobDefinition<S> & { queue: Q } {
  return def;
}
