import { withTransaction } from '../../kernel/db/pool.ts';
import { RetryableError } from '../../kernel/errors/retry.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import type { Infra } from '../../platform/infra.ts';
import { enqueueFirstDelivery } from '../webhooks/delivery.ts';
import { insertWebhookMessage } from '../webhooks/outbox.ts';
import { decideOutcome, normalizeAnsweredBy, retryAt } from './outcome.ts';
import { closeIfCanceled, completeIfFinished, getSettleInput, requeueAttempt, settleAttempt } from './store.ts';

export const CALL_FINISHED_EVENT = 'campaign.call.finished';
/** A refused attempt's recipient is due again this much later (the slot that refused it may be free by then). */
const REFUSED_RETRY_MS = 5000;
/** Refusals of one recipient after which an attempt refused again fails (with the refusal as its reason). */
const MAX_REFUSALS = 5;

/**
 * Settles an ended attempt (`campaign.settle`, once per attempt): its outcome from Twilio's final status and the
 * session (end reason, answeredBy; never the agent, which may have changed since the call), the recipient back to pending with back-off or done, a `campaign.call.finished`
 * webhook in the same transaction, then the dispatcher for the freed slot. Twilio's `completed` can come before
 * the realtime role has written how the session ended; while the session is still active the job retries (its
 * backoff), and on its last attempt settles with what is known.
 */
export async function settleCampaignCall(
  infra: Infra,
  callId: string,
  ctx: { attempt: number; attemptsAllowed: number; log: Logger },
): Promise<void> {
  const s = await getSettleInput(infra.db, callId);
  if (!s || s.settled_at || !s.ended_at) return;
  const connected = s.session_id && s.session_status && !['pending', 'expired'].includes(s.session_status);
  if (connected && s.session_status === 'active' && ctx.attempt < ctx.attemptsAllowed)
    throw new RetryableError('the call ended; its session is still being closed');
  if (s.requeue_reason && s.refused_before < MAX_REFUSALS) {
    // Refused by the platform once answered (the callee heard the operator's message): not the recipient's outcome.
    const at = new Date(Date.now() + REFUSED_RETRY_MS);
    if (await requeueAttempt(infra.db, callId, s.recipient_id, at))
      ctx.log.info({ callId, reason: s.requeue_reason }, 'campaign call refused by the platform; recipient re-queued');
    await infra.queues.enqueue(
      'campaign.dispatch',
      { campaignId: s.campaign_id },
      { jobId: `dispatch-${s.campaign_id}-requeue-${callId}`, delay: REFUSED_RETRY_MS },
    );
    return;
  }
  const answeredBy = normalizeAnsweredBy(s.session_answered_by) ?? normalizeAnsweredBy(s.answered_by);
  const { outcome, reason } = decideOutcome({
    status: s.status,
    error: s.error,
    answeredBy,
    sessionId: connected ? s.session_id : null,
    sessionEndReason: connected ? s.session_end_reason : null,
    hangupReason: s.hangup_reason,
    requeueReason: s.requeue_reason,
  });
  // Attempts the platform refused do not count against the recipient's maxAttempts.
  const next = retryAt(outcome, s.attempt - s.refused_before, {
    maxAttempts: s.retry_max_attempts,
    backoffSeconds: s.retry_backoff_seconds,
    on: s.retry_on,
  });
  const messageId = await withTransaction(infra.db, async (tx) => {
    const done = await settleAttempt(
      tx,
      { callId, recipientId: s.recipient_id, outcome, reason, answeredBy: answeredBy ?? null },
      next,
    );
    if (!done || !s.webhook_url) return null;
    return insertWebhookMessage(tx, {
      developerId: s.developer_id,
      url: s.webhook_url,
      source: `campaign_call:${callId}`,
      type: CALL_FINISHED_EVENT,
      data: {
        campaignId: s.campaign_id,
        recipientId: s.recipient_id,
        callId,
        phone: s.phone,
        attempt: s.attempt,
        outcome,
        outcomeReason: reason,
        answeredBy: answeredBy ?? 'unknown',
        endReason: connected ? s.session_end_reason : null,
        beepAtMs: connected ? s.session_beep_at_ms : null,
        callSid: s.call_sid,
        sessionId: connected ? s.session_id : null,
        willRetry: next !== null,
        nextAttemptAt: next?.toISOString() ?? null,
      },
    });
  });
  ctx.log.info({ callId, outcome, retry: next !== null }, 'campaign call settled');
  if (messageId) await enqueueFirstDelivery(infra, messageId);
  await closeIfCanceled(infra.db, s.campaign_id);
  if (!(await completeIfFinished(infra.db, s.campaign_id)))
    await infra.queues.enqueue('campaign.dispatch', { campaignId: s.campaign_id });
}
