import { withTransaction } from '../../kernel/db/pool.ts';
import { RetryableError } from '../../kernel/errors/retry.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import type { Infra } from '../../platform/infra.ts';
import { enqueueFirstDelivery } from '../webhooks/delivery.ts';
import { insertWebhookMessage } from '../webhooks/outbox.ts';
import { decideOutcome, normalizeAnsweredBy, retryAt } from './outcome.ts';
import { closeIfCanceled, completeIfFinished, getSettleInput, settleAttempt } from './store.ts';

export const CALL_FINISHED_EVENT = 'campaign.call.finished';

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
  const answeredBy = normalizeAnsweredBy(s.session_answered_by) ?? normalizeAnsweredBy(s.answered_by);
  const { outcome, reason } = decideOutcome({
    status: s.status,
    error: s.error,
    answeredBy,
    sessionId: connected ? s.session_id : null,
    sessionEndReason: connected ? s.session_end_reason : null,
    hangupReason: s.hangup_reason,
  });
  const next = retryAt(outcome, s.attempt, {
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
