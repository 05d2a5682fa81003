import { catalog } from '../queue/catalog.ts';
import type { QueueName } from '../queue/define.ts';
import type { Infra } from '../runtime/infra.ts';
import { deliveryJobId } from '../webhooks/delivery.ts';
import { overdueMessages } from '../webhooks/outbox.ts';
import { DUB_STEPS, dubStepJobId } from './dub-flow.ts';
import { enqueueVideoJob, queueEntryOf } from './enqueue.ts';
import { fail } from './lifecycle.ts';
import { staleOpenJobs } from './store.ts';

/**
 * Postgres is the source of truth; Redis can lose what it held (a flush, a failover without persistence). Every
 * VIDEO_RECONCILE_INTERVAL_MS this looks at open jobs not touched for VIDEO_RECONCILE_AFTER_MS:
 *  - no queue entry (BullMQ says `unknown`) → enqueue again with jobId = row id (a no-op if it reappeared);
 *  - queue entry failed for good (e.g. a worker died twice mid-job and the stalled check gave up), or for a dub
 *    job one of its flow's steps did (the parent would wait forever) → the row is marked failed with
 *    engine_unavailable, which also sends its webhook;
 * and re-enqueues webhook deliveries whose next attempt is overdue (lost delayed jobs).
 */
export async function reconcileVideoJobs(
  infra: Infra,
): Promise<{ requeued: number; failed: number; webhooks: number }> {
  const stats = { requeued: 0, failed: 0, webhooks: 0 };
  for (const row of await staleOpenJobs(infra.db, infra.config.VIDEO_RECONCILE_AFTER_MS)) {
    const { queue, jobId } = queueEntryOf(row);
    const state = await infra.queues.get(queue as QueueName).getJobState(jobId);
    if (state === 'unknown') {
      await enqueueVideoJob(infra, row);
      stats.requeued++;
    } else if (
      state === 'failed' ||
      (row.type === 'dub' && state === 'waiting-children' && (await dubChildFailed(infra, row.id)))
    ) {
      await fail(infra, row.id, {
        code: 'engine_unavailable',
        message: 'The worker running this job stopped repeatedly; the job was given up. Submit it again.',
      });
      stats.failed++;
    }
  }
  for (const msg of await overdueMessages(infra.db, Math.max(60_000, infra.config.VIDEO_RECONCILE_AFTER_MS))) {
    const attempt = msg.attempts + 1;
    const state = await infra.queues.get('cpu').getJobState(deliveryJobId(msg.id, attempt));
    if (state === 'unknown') {
      await infra.queues.enqueue(
        'webhook.deliver',
        { messageId: msg.id, attempt },
        { jobId: deliveryJobId(msg.id, attempt) },
      );
      stats.webhooks++;
    }
  }
  if (stats.requeued || stats.failed || stats.webhooks) infra.log.info(stats, 'video reconciler acted');
  return stats;
}

/** True when a step of a dub flow failed for good (its parent would wait for it forever). */
async function dubChildFailed(infra: Infra, videoJobId: string): Promise<boolean> {
  for (const step of DUB_STEPS) {
    const queue = catalog[step].queue;
    if ((await infra.queues.get(queue).getJobState(dubStepJobId(videoJobId, step))) === 'failed') return true;
  }
  return false;
}

/** Installs the periodic reconcile job (a BullMQ job scheduler; upsert is idempotent across API replicas). */
export async function scheduleReconciler(infra: Infra): Promise<void> {
  await infra.queues
    .get('cpu')
    .upsertJobScheduler(
      'video-reconcile',
      { every: infra.config.VIDEO_RECONCILE_INTERVAL_MS },
      { name: 'video.reconcile', data: {}, opts: { removeOnComplete: true, removeOnFail: { count: 100 } } },
    );
}
