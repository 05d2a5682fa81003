import { entryState, type EntryState } from '../../kernel/queue/entry-state.ts';
import { catalog } from '../../kernel/queue/catalog.ts';
import type { QueueName } from '../../kernel/queue/define.ts';
import { requeueBackoff } from '../../platform/requeue-backoff.ts';
import type { Infra } from '../../platform/infra.ts';
import { DUB_STEPS, dubStepJobId } from './dub-flow.ts';
import { enqueueVideoJob, queueEntryOf } from './enqueue.ts';
import { fail } from './lifecycle.ts';
import { staleOpenJobs } from './store.ts';

/**
 * Postgres is the source of truth; Redis can lose what it held (a flush, a failover without persistence). Open
 * jobs not touched for RECONCILE_AFTER_MS are checked against their queue entry (see entryState):
 *  - lost (no entry) → enqueued again with jobId = row id (a no-op if it reappeared);
 *  - out of attempts waiting for a dependency (Postgres or Redis down through every retry) → enqueued again with
 *    backoff: accepted work waits an outage out, it is never failed for it;
 *  - dead (it stalled repeatedly: the worker running it died every time; or unrecoverable), or for a dub job one
 *    of its flow's steps is (the parent would wait forever) → the row is marked failed with engine_unavailable,
 *    which also sends its webhook.
 */
export async function reconcileVideoJobs(infra: Infra): Promise<{ requeued: number; failed: number }> {
  const stats = { requeued: 0, failed: 0 };
  for (const row of await staleOpenJobs(infra.db, infra.config.RECONCILE_AFTER_MS)) {
    const { queue, jobId } = queueEntryOf(row);
    const q = infra.queues.get(queue as QueueName);
    let { state } = await entryState(q, jobId);
    if (row.type === 'dub' && state === 'present') state = await dubStepsState(infra, row.id);
    if (state === 'present') continue;
    if (state === 'dead') {
      await fail(infra, row.id, {
        code: 'engine_unavailable',
        message: 'The worker running this job stopped repeatedly; the job was given up. Submit it again.',
      });
      stats.failed++;
      continue;
    }
    // The old entry (finished, or failed with its flow) goes first: adding under its id would be a no-op.
    await q.remove(jobId, { removeChildren: true });
    const delay = state === 'exhausted' ? requeueBackoff(infra).next(jobId, 2000) : 0;
    await enqueueVideoJob(infra, row, delay);
    stats.requeued++;
  }
  if (stats.requeued || stats.failed) infra.log.info(stats, 'video reconciler acted');
  return stats;
}

/** The worst state among a dub flow's steps (its parent waits for them). */
async function dubStepsState(infra: Infra, videoJobId: string): Promise<EntryState> {
  let worst: EntryState = 'present';
  for (const step of DUB_STEPS.slice(0, -1)) {
    const q = infra.queues.get(catalog[step].queue);
    const { state } = await entryState(q, dubStepJobId(videoJobId, step));
    if (state === 'dead') return 'dead';
    // A step's entry removed once it completed is normal (the parent still holds its result).
    if (state === 'exhausted') worst = 'exhausted';
  }
  return worst;
}
