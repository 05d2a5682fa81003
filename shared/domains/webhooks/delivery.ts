import { withTransaction } from '../../kernel/db/pool.ts';
import { newId } from '../../kernel/ids.ts';
import { safeFetch } from '../../kernel/net/safe-fetch.ts';
import { webhookDeliveries } from '../../kernel/observability/metrics.ts';
import type { Infra } from '../../platform/infra.ts';
import { delayBeforeAttempt } from './schedule.ts';
import { webhookHeaders } from './standard-webhooks.ts';

interface MessageWithEndpoint {
  id: string;
  status: string;
  attempts: number;
  body: string;
  url: string;
  secret: string;
  endpoint_id: string;
  disabled_at: Date | null;
}

export function deliveryJobId(messageId: string, attempt: number): string {
  return `${messageId}-a${attempt}`;
}

/**
 * One delivery attempt of a message. Every attempt carries the same webhook-id (receivers dedupe on it) and a
 * fresh timestamp and signature. 2xx = delivered; 410 disables the endpoint; anything else (or no answer) is
 * logged and the next attempt is scheduled per the Standard Webhooks schedule. Re-running an attempt that
 * was already recorded does nothing.
 */
export async function deliverWebhook(infra: Infra, messageId: string, attempt: number, signal?: AbortSignal) {
  const { rows } = await infra.db.query<MessageWithEndpoint>(
    `select m.id, m.status, m.attempts, m.body, e.url, e.secret, e.id as endpoint_id, e.disabled_at
     from webhook_messages m join webhook_endpoints e on e.id = m.endpoint_id where m.id = $1`,
    [messageId],
  );
  const msg = rows[0];
  if (!msg || msg.status !== 'pending' || msg.attempts >= attempt) return { skipped: true };

  const started = Date.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  if (msg.disabled_at) {
    error = 'endpoint disabled (it answered 410 Gone)';
  } else {
    try {
      const res = await safeFetch(msg.url, {
        policy: infra.addressPolicy,
        method: 'POST',
        headers: webhookHeaders(msg.secret, msg.id, msg.body),
        body: msg.body,
        maxBytes: 64 * 1024,
        timeoutMs: infra.config.WEBHOOK_TIMEOUT_MS,
        maxRedirects: 0,
        signal,
        param: 'webhook_url',
      });
      statusCode = res.status;
      res.body.resume();
    } catch (e) {
      error = (e as Error).message.slice(0, 500);
    }
  }
  const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
  const gone = statusCode === 410 || msg.disabled_at !== null;
  const nextDelay = ok || gone ? null : delayBeforeAttempt(attempt + 1, infra.config.WEBHOOK_RETRY_SCALE);
  const status = ok ? 'delivered' : nextDelay === null ? 'failed' : 'pending';
  webhookDeliveries.inc({
    outcome: ok ? 'delivered' : status === 'pending' ? 'retrying' : error?.includes('private') ? 'rejected' : 'failed',
  });

  await withTransaction(infra.db, async (tx) => {
    await tx.query(
      `insert into webhook_deliveries (id, message_id, attempt, status_code, error, duration_ms)
       values ($1, $2, $3, $4, $5, $6) on conflict (message_id, attempt) do nothing`,
      [newId('delivery'), msg.id, attempt, statusCode, error, Date.now() - started],
    );
    await tx.query(
      `update webhook_messages set attempts = $2, status = $3,
         next_attempt_at = now() + make_interval(secs => $4::float / 1000),
         delivered_at = case when $3 = 'delivered' then now() else delivered_at end
       where id = $1`,
      [msg.id, attempt, status, nextDelay ?? 0],
    );
    if (statusCode === 410) {
      await tx.query('update webhook_endpoints set disabled_at = now() where id = $1', [msg.endpoint_id]);
    }
  });
  if (status === 'pending') {
    await infra.queues.enqueue(
      'webhook.deliver',
      { messageId: msg.id, attempt: attempt + 1 },
      { jobId: deliveryJobId(msg.id, attempt + 1), delay: nextDelay! },
    );
  }
  return { statusCode, status };
}

/** Enqueues the first attempt of a freshly recorded message. */
export async function enqueueFirstDelivery(infra: Infra, messageId: string): Promise<void> {
  await infra.queues.enqueue('webhook.deliver', { messageId, attempt: 1 }, { jobId: deliveryJobId(messageId, 1) });
}
