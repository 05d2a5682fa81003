import type { Queryable } from '../db/pool.ts';
import { newId } from '../ids.ts';
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
