import type { Queryable } from '../../kernel/db/pool.ts';
import { newId } from '../../kernel/ids.ts';
import { enableEndpoint, getOrCreateEndpoint } from './endpoints.ts';

export interface WebhookMessageRow {
  id: string;
  developer_id: string;
  endpoint_id: string;
  source: string;
  event_type: string;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date;
  created_at: Date;
  delivered_at: Date | null;
}

/**
 * Records one notification in the outbox, inside the caller's transaction (the one that finishes the job), so a
 * job that finished has exactly one message: `source` is unique and a second call is a no-op returning null.
 * The caller enqueues `webhook.deliver` for the returned id after commit (the reconciler covers a crash between).
 */
export async function insertWebhookMessage(
  tx: Queryable,
  input: { developerId: string; url: string; source: string; type: string; data: unknown },
): Promise<string | null> {
  const endpoint = await getOrCreateEndpoint(tx, input.developerId, input.url);
  await enableEndpoint(tx, endpoint.id);
  const id = newId('message');
  const body = JSON.stringify({ type: input.type, timestamp: new Date().toISOString(), data: input.data });
  const { rows } = await tx.query<{ id: string }>(
    `insert into webhook_messages (id, developer_id, endpoint_id, source, event_type, body)
     values ($1, $2, $3, $4, $5, $6) on conflict (source) do nothing returning id`,
    [id, input.developerId, endpoint.id, input.source, input.type, body],
  );
  return rows[0]?.id ?? null;
}

/** Messages still owed an attempt whose next attempt is overdue (the reconciler re-enqueues them). */
export async function overdueMessages(db: Queryable, olderThanMs: number, limit = 100): Promise<WebhookMessageRow[]> {
  const { rows } = await db.query<WebhookMessageRow>(
    `select * from webhook_messages where status = 'pending'
     and next_attempt_at < now() - make_interval(secs => $1::float / 1000) order by next_attempt_at limit $2`,
    [olderThanMs, limit],
  );
  return rows;
}

/** A message as the developer's overview shows it: its address and the outcome of its last attempt. */
export interface MessageOutcomeRow {
  id: string;
  event_type: string;
  url: string;
  status: WebhookMessageRow['status'];
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

/** The developer's most recent messages, newest first (at most `limit`), each with its last attempt's outcome. */
export async function recentMessageOutcomes(
  db: Queryable,
  developerId: string,
  limit: number,
): Promise<MessageOutcomeRow[]> {
  const { rows } = await db.query<MessageOutcomeRow>(
    `select m.id, m.event_type, e.url, m.status, m.attempts, d.status_code as last_status_code, d.error as last_error,
            m.created_at, m.delivered_at
       from webhook_messages m
       join webhook_endpoints e on e.id = m.endpoint_id
       left join lateral (select status_code, error from webhook_deliveries where message_id = m.id
                           order by attempt desc limit 1) d on true
      where m.developer_id = $1
      order by m.created_at desc limit $2`,
    [developerId, limit],
  );
  return rows;
}
