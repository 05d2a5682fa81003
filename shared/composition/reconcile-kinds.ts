import { stripeBilling } from '../domains/billing/stripe-client.ts';
import { failTranscriptionJob, staleProcessingTranscriptions } from '../domains/speech/transcription-store.ts';
import { failUndialledTask, undialledOutboundTasks } from '../domains/realtime/outbound-tasks.ts';
import type { Infra } from '../platform/infra.ts';
import { deliveryJobId } from '../domains/webhooks/delivery.ts';
import { overdueMessages } from '../domains/webhooks/outbox.ts';
import { catalog, type JobPayload } from '../kernel/queue/catalog.ts';
import { entryState } from '../kernel/queue/entry-state.ts';
import { requeueBackoff } from '../platform/requeue-backoff.ts';

/**
 * Checks the queue entry of an open job whose BullMQ id is its row id: lost or out of attempts → enqueued again
 * (with backoff in the second case); dead → `onDead` (the job cannot run).
 */
async function putBack<N extends 'speech.transcribe' | 'realtime.dial'>(
  infra: Infra,
  name: N,
  id: string,
  payload: JobPayload<N>,
  onDead: () => Promise<void>,
): Promise<'present' | 'requeued' | 'dead'> {
  const def = catalog[name];
  const q = infra.queues.get(def.queue);
  const { state } = await entryState(q, id);
  if (state === 'present') return 'present';
  if (state === 'dead') {
    await onDead();
    return 'dead';
  }
  // The old entry goes first: adding under its id would be a no-op.
  await q.remove(id);
  const delay = state === 'exhausted' ? requeueBackoff(infra).next(id, def.backoffMs) : 0;
  await infra.queues.enqueue(name, payload, { jobId: id, delay });
  return 'requeued';
}

const GAVE_UP = 'The worker running this job stopped repeatedly; the job was given up. Submit it again.';

/**
 * Accepted transcription jobs (`processing`) older than RECONCILE_AFTER_MS whose queue entry is lost or ran out
 * of attempts waiting for a dependency go back on the queue (the BullMQ id is the row id, so this is idempotent);
 * one whose worker died on it repeatedly is failed with a clear message.
 */
export async function reconcileTranscriptions(infra: Infra): Promise<{ requeued: number; failed: number }> {
  const stats = { requeued: 0, failed: 0 };
  for (const id of await staleProcessingTranscriptions(infra.db, infra.config.RECONCILE_AFTER_MS)) {
    const outcome = await putBack(infra, 'speech.transcribe', id, { transcriptionJobId: id }, async () => {
      if (await failTranscriptionJob(infra.db, id, { code: 'transcription_failed', message: GAVE_UP })) stats.failed++;
    });
    if (outcome === 'requeued') stats.requeued++;
  }
  return stats;
}

/** Webhook messages owed an attempt that is overdue and not on the queue: that attempt is enqueued again. */
export async function reconcileWebhooks(infra: Infra): Promise<number> {
  let requeued = 0;
  const q = infra.queues.get(catalog['webhook.deliver'].queue);
  for (const msg of await overdueMessages(infra.db, infra.config.RECONCILE_AFTER_MS)) {
    const attempt = msg.attempts + 1;
    const jobId = deliveryJobId(msg.id, attempt);
    if ((await entryState(q, jobId)).state === 'present') continue;
    // Any other state: the delivery handler records each attempt once, so running it again is safe.
    await q.remove(jobId);
    await infra.queues.enqueue('webhook.deliver', { messageId: msg.id, attempt }, { jobId });
    requeued++;
  }
  return requeued;
}

/**
 * Outbound calls not yet placed whose dispatch job is lost go back on the queue, for DIAL_WINDOW after they were
 * requested (a call placed much later than asked would surprise the callee); one the dispatcher gave up on is
 * marked failed.
 */
const DIAL_WINDOW = '15 minutes';

export async function reconcileDialTasks(infra: Infra): Promise<number> {
  let requeued = 0;
  for (const id of await undialledOutboundTasks(infra.db, infra.config.RECONCILE_AFTER_MS, DIAL_WINDOW)) {
    const outcome = await putBack(infra, 'realtime.dial', id, { taskId: id }, async () => {
      await failUndialledTask(infra.db, id, 'the dispatcher stopped repeatedly');
    });
    if (outcome === 'requeued') requeued++;
  }
  return requeued;
}

/**
 * The periodic Stripe overage report: one job per OVERAGE_REPORT_INTERVAL_MS window, its id the window's number,
 * so every replica's reconciler adds the same job and it runs once per window (it was a job scheduler stored in
 * Redis, which a Redis loss took with it).
 */
export async function scheduleOverageReport(infra: Infra, now = Date.now()): Promise<void> {
  if (!stripeBilling(infra.config)) return;
  const window = Math.floor(now / infra.config.OVERAGE_REPORT_INTERVAL_MS);
  await infra.queues.enqueue('billing.report-overage', {}, { jobId: `overage-${window}` });
}
