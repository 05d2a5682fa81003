import type { Queue } from 'bullmq';

/**
 * What an open job's queue entry says, for the reconciler:
 *  - `present`: waiting, delayed, active or waiting for children: the queue has it;
 *  - `lost`: no entry (Redis lost it: a flush, a failover to an empty replica) or a finished entry while the row
 *    is still open: put it back;
 *  - `exhausted`: it failed after using all its attempts on retryable failures. Handlers fail a job's row
 *    themselves for an engine's or the input's failure, so a row still open here ran out of attempts waiting
 *    for a dependency (Postgres restarting, Redis, S3): put it back, with backoff;
 *  - `dead`: it failed for good (an unrecoverable error, or it stalled repeatedly: the worker running it died
 *    every time): the job cannot run, fail it with a clear code.
 */
export type EntryState = 'present' | 'lost' | 'exhausted' | 'dead';

export async function entryState(queue: Queue, jobId: string): Promise<{ state: EntryState; reason?: string }> {
  const job = await queue.getJob(jobId);
  if (!job) return { state: 'lost' };
  const state = await job.getState();
  if (state === 'completed') return { state: 'lost' };
  if (state !== 'failed') return { state: state === 'unknown' ? 'lost' : 'present' };
  const reason = job.failedReason ?? '';
  const stalled = /stalled more than allowable limit/i.test(reason);
  const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1);
  return { state: !stalled && exhausted ? 'exhausted' : 'dead', reason };
}
