import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { ApiError } from '../errors/api-error.ts';
import { catalog, type JobName, type JobPayload } from './catalog.ts';
import { QUEUES, type JobDefinition, type QueueName } from './define.ts';

export function queuePrefix(redisPrefix: string): string {
  return `${redisPrefix}:q`;
}

/** Producer side: one BullMQ Queue per queue name, sharing one connection. */
export class Queues {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  get(name: QueueName): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.redis, prefix: queuePrefix(this.prefix) });
      this.queues.set(name, q);
    }
    return q;
  }

  all(): Queue[] {
    return QUEUES.map((n) => this.get(n));
  }

  /**
   * Typed enqueue: the payload is validated against the catalog schema (a bad payload is a bug here, not in the
   * worker), and attempts/backoff come from the catalog. Pass `jobId` to make enqueueing idempotent.
   */
  async enqueue<N extends JobName>(
    name: N,
    payload: JobPayload<N>,
    opts: Pick<JobsOptions, 'jobId' | 'priority' | 'delay'> = {},
  ): Promise<string> {
    const def: JobDefinition = catalog[name];
    const parsed = def.schema.safeParse(payload);
    if (!parsed.success) throw ApiError.validation(`invalid payload for job ${String(name)}: ${parsed.error.message}`);
    const job = await this.get(def.queue).add(name as string, parsed.data, {
      attempts: def.attempts,
      backoff: { type: 'exponential', delay: def.backoffMs },
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
      ...opts,
    });
    return job.id!;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
