import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withTransaction } from '../../kernel/db/pool.ts';
import { isTransientDependencyError, RetryableError } from '../../kernel/errors/retry.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import { gpuSecondsBilled } from '../../kernel/observability/metrics.ts';
import type { JobContext } from '../../kernel/queue/worker-runner.ts';
import type { Infra } from '../../platform/infra.ts';
import { enqueueFirstDelivery } from '../webhooks/delivery.ts';
import { insertWebhookMessage } from '../webhooks/outbox.ts';
import { chargeJob } from './billing.ts';
import { toVideoFailure } from './failure.ts';
import { eraseJobKeys } from './job-keys.ts';
import { toVideoJob } from './present.ts';
import { addGpuSeconds, markCompleted, markFailed, setProgress, startAttempt, type VideoJobRow } from './store.ts';

export interface StepContext {
  job: VideoJobRow;
  workDir: string;
  signal: AbortSignal;
  log: Logger;
  /** Fraction 0-1 of this step; mapped into the job's overall range and only ever rising. */
  progress(fraction: number): Promise<void>;
}

/** What a finishing step hands back: the result (with `video_key` for the output) and the units to charge. */
export interface JobOutcome {
  result: Record<string, unknown> & { duration_seconds: number; provider: string };
  units: number;
}

export interface StepOptions {
  /** Part of the overall progress this step covers, e.g. [0.2, 0.6] for a dub step. */
  range?: [number, number];
  /** GPU pool name when the step runs on a GPU queue: its wall time is recorded as GPU-seconds. */
  gpuPool?: string;
  jobName: string;
}

/**
 * Runs one step of a video job under the Postgres state machine: pending|processing → processing; progress
 * rises; a step that `finishes` moves the job to completed (once: a conditional UPDATE) in the same transaction
 * that records its webhook message and erases the caller's sealed provider keys, then charges and enqueues the
 * delivery. Failures map to the contract's error codes; retryable ones are retried by BullMQ until the last
 * attempt, which fails the job (erasing the keys the same way). A job already finished (a duplicate run, or a dub
 * step after an earlier step failed) is skipped.
 */
export async function runStep(
  infra: Infra,
  videoJobId: string,
  ctx: JobContext,
  opts: StepOptions,
  work: (s: StepContext) => Promise<JobOutcome | void>,
): Promise<'completed' | 'failed' | 'continued' | 'skipped'> {
  const job = await startAttempt(infra.db, videoJobId);
  if (!job) return 'skipped';
  const [lo, hi] = opts.range ?? [0, 1];
  const log = ctx.log.child({ videoJobId, type: job.type });
  const workDir = await mkdtemp(join(tmpdir(), 'vap-video-'));
  const started = performance.now();
  let lastWrite = 0;
  const step: StepContext = {
    job,
    workDir,
    signal: ctx.signal,
    log,
    async progress(f) {
      const now = performance.now();
      if (now - lastWrite < 200 && f < 1) return; // bound the write rate
      lastWrite = now;
      const overall = lo + (hi - lo) * Math.max(0, Math.min(1, f));
      await Promise.all([setProgress(infra.db, videoJobId, overall), ctx.progress(overall)]);
    },
  };
  try {
    await setProgress(infra.db, videoJobId, lo);
    const outcome = await work(step);
    recordGpu(infra, videoJobId, opts, started);
    if (!outcome) {
      await setProgress(infra.db, videoJobId, hi);
      return 'continued';
    }
    await finish(infra, videoJobId, outcome);
    return 'completed';
  } catch (e) {
    recordGpu(infra, videoJobId, opts, started);
    // Postgres, Redis or S3 briefly gone: never a reason to fail accepted work. Retried, and past the last
    // attempt the reconciler puts the job back on the queue.
    if (isTransientDependencyError(e) && !ctx.signal.aborted) throw new RetryableError((e as Error).message);
    const failure = toVideoFailure(e, ctx.signal.aborted);
    if (failure.retryable && ctx.attempt < ctx.attemptsAllowed) {
      log.warn({ code: failure.code, attempt: ctx.attempt }, 'video step failed; retrying');
      throw new RetryableError(failure.message);
    }
    log.warn({ code: failure.code }, 'video job failed');
    await fail(infra, videoJobId, { code: failure.code, message: failure.message });
    return 'failed';
  } finally {
    await rm(workDir, { recursive: true, force: true }).catch(() => {});
  }
}

function recordGpu(infra: Infra, id: string, opts: StepOptions, started: number): void {
  if (!opts.gpuPool) return;
  const seconds = (performance.now() - started) / 1000;
  gpuSecondsBilled.inc({ pool: opts.gpuPool, job: opts.jobName }, seconds);
  void addGpuSeconds(infra.db, id, seconds).catch(() => {});
}

export async function finish(infra: Infra, id: string, outcome: JobOutcome): Promise<void> {
  const ttl = infra.config.VIDEO_URL_TTL_SECONDS;
  const done = await withTransaction(infra.db, async (tx) => {
    const row = await markCompleted(tx, id, outcome.result, outcome.units);
    if (!row) return null;
    // A caller's key lives no longer than its job: erased in the transaction that ends it.
    await eraseJobKeys(tx, id);
    const messageId = row.webhook_url
      ? await insertWebhookMessage(tx, {
          developerId: row.owner_id,
          url: row.webhook_url,
          source: `video_job:${row.id}`,
          type: 'video.job.completed',
          data: await toVideoJob(row, infra.storage, ttl),
        })
      : null;
    return { row, messageId };
  });
  if (!done) return;
  await chargeJob(infra, done.row, outcome.units).catch((e: Error) =>
    infra.log.error({ videoJobId: id, err: e.message }, 'video charge failed; the reconciler charges it'),
  );
  if (done.messageId) await enqueueFirstDelivery(infra, done.messageId);
}

export async function fail(infra: Infra, id: string, error: { code: string; message: string }): Promise<void> {
  const ttl = infra.config.VIDEO_URL_TTL_SECONDS;
  const done = await withTransaction(infra.db, async (tx) => {
    const row = await markFailed(tx, id, error);
    if (!row) return null;
    await eraseJobKeys(tx, id);
    return row.webhook_url
      ? await insertWebhookMessage(tx, {
          developerId: row.owner_id,
          url: row.webhook_url,
          source: `video_job:${row.id}`,
          type: 'video.job.failed',
          data: await toVideoJob(row, infra.storage, ttl),
        })
      : null;
  });
  if (done) await enqueueFirstDelivery(infra, done);
}
