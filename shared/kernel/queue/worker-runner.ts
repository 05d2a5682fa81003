import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { isRetryable } from '../errors/retry.ts';
import type { Logger } from '../observability/logger.ts';
import { jobDuration, jobsTotal } from '../observability/metrics.ts';
import { catalog, type JobName, type JobPayload } from './catalog.ts';
import type { JobDefinition, QueueName } from './define.ts';
import { queuePrefix } from './queues.ts';

export interface JobContext {
  jobId: string;
  /** 1 on the first run; handlers must be idempotent since a stalled or retried job runs again. */
  attempt: number;
  attemptsAllowed: number;
  /** Fires on the catalog timeout and on a forced shutdown. */
  signal: AbortSignal;
  log: Logger;
  progress(fraction: number): Promise<void>;
}

export type JobHandler<N extends JobName> = (payload: JobPayload<N>, ctx: JobContext) => Promise<unknown>;
/** A handler for every job of a pool: leaving one out is a compile error. */
export type HandlerMap<Names extends JobName> = { [N in Names]: JobHandler<N> };

export interface RunningWorker {
  worker: Worker;
  /** Stops taking jobs, waits up to graceMs for active ones, then aborts them (they go back to the queue). */
  drain(graceMs: number): Promise<void>;
}

/**
 * Runs one queue's jobs through a handler map. Payloads are validated against the catalog; errors that are not
 * retryable fail the job at once (UnrecoverableError), others retry with the catalog's backoff.
 */
export function runWorker(
  queue: QueueName,
  handlers: Partial<Record<JobName, JobHandler<never>>>,
  deps: {
    redis: Redis;
    prefix: string;
    concurrency: number;
    log: Logger;
    /** Lock length and stalled-check period: a dead worker's job goes to another within about twice this. */
    stalledIntervalMs?: number;
  },
): RunningWorker {
  const controllers = new Set<AbortController>();
  const log = deps.log.child({ queue });

  const worker = new Worker(
    queue,
    async (job: Job) => {
      const name = job.name as JobName;
      const def = catalog[name] as JobDefinition | undefined;
      const handler = handlers[name] as JobHandler<JobName> | undefined;
      if (!def || !handler) throw new UnrecoverableError(`no handler for job ${job.name} on queue ${queue}`);
      const parsed = def.schema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid payload: ${parsed.error.message}`);

      const ac = new AbortController();
      controllers.add(ac);
      const timer = setTimeout(() => ac.abort(new Error(`job timed out after ${def.timeoutMs} ms`)), def.timeoutMs);
      const end = jobDuration.startTimer({ queue, job: job.name });
      const ctx: JobContext = {
        jobId: job.id!,
        attempt: job.attemptsMade + 1,
        attemptsAllowed: job.opts.attempts ?? 1,
        signal: ac.signal,
        log: log.child({ job: job.name, jobId: job.id }),
        progress: (f) => job.updateProgress(Math.max(0, Math.min(1, f))),
      };
      try {
        const out = await handler(parsed.data as never, ctx);
        end({ outcome: 'completed' });
        jobsTotal.inc({ queue, job: job.name, outcome: 'completed' });
        return out;
      } catch (e) {
        end({ outcome: 'failed' });
        jobsTotal.inc({ queue, job: job.name, outcome: 'failed' });
        ctx.log.warn({ err: (e as Error).message, attempt: ctx.attempt }, 'job attempt failed');
        if (!isRetryable(e)) throw new UnrecoverableError((e as Error).message);
        throw e;
      } finally {
        clearTimeout(timer);
        controllers.delete(ac);
      }
    },
    {
      connection: deps.redis,
      prefix: queuePrefix(deps.prefix),
      // Stored on each job as processedBy: which process (host:pid) played it, for operators and tests alike.
      name: `${hostname()}:${process.pid}`,
      concurrency: deps.concurrency,
      autorun: true,
      ...(deps.stalledIntervalMs
        ? { lockDuration: deps.stalledIntervalMs, stalledInterval: deps.stalledIntervalMs }
        : {}),
    },
  );
  worker.on('error', (e) => log.error({ err: e.message }, 'worker error'));

  return {
    worker,
    async drain(graceMs: number) {
      const closing = worker.close();
      const timedOut = await Promise.race([
        closing.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref()),
      ]);
      if (timedOut) {
        log.warn({ active: controllers.size }, 'grace period over; aborting active jobs');
        for (const ac of controllers) ac.abort(new Error('worker shutting down'));
        await worker.close(true);
      }
    },
  };
}
