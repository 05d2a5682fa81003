import type { Queryable } from '../../kernel/db/pool.ts';
import { newId } from '../../kernel/ids.ts';
import { newWebhookSecret } from './standard-webhooks.ts';

export interface WebhookEndpointRow {
  id: string;
  developer_id: string;
  url: string;
  secret: string;
  disabled_at: Date | null;
  created_at: Date;
}

/**
 * The endpoint of a (developer, address): created with a fresh `whsec_` secret on first use, so the secret
 * exists before the first notification is sent and the developer can read it from the API at any time.
 */
export async function getOrCreateEndpoint(
  db: Queryable,
  developerId: string,
  url: string,
): Promise<WebhookEndpointRow> {
  const inserted = await db.query<WebhookEndpointRow>(
    `insert into webhook_endpoints (id, developer_id, url, secret) values ($1, $2, $3, $4)
     on conflict (developer_id, url) do nothing returning *`,
    [newId('webhook'), developerId, url, newWebhookSecret()],
  );
  if (inserted.rows[0]) return inserted.rows[0];
  const { rows } = await db.query<WebhookEndpointRow>(
    'select * from webhook_endpoints where developer_id = $1 and url = $2',
    [developerId, url],
  );
  return rows[0]!;
}

/** Re-enables an endpoint a 410 disabled (a new job naming the address again means it is wanted). */
export async function enableEndpoint(db: Queryable, id: string): Promise<void> {
  await db.query('update webhook_endpoints set disabled_at = null where id = $1 and disabled_at is not null', [id]);
}

/** The developer's endpoint for an address, or null when no job or POST /v1/webhooks/secret has made one. */
export async function findEndpointByUrl(
  db: Queryable,
  developerId: string,
  url: string,
): Promise<WebhookEndpointRow | null> {
  const { rows } = await db.query<WebhookEndpointRow>(
    'select * from webhook_endpoints where developer_id = $1 and url = $2',
    [developerId, url],
  );
  return rows[0] ?? null;
}

/** The developer's endpoints, newest first (at most `limit`). */
export async function listEndpoints(
  db: Queryable,
  developerId: string,
  limit: number,
): Promise<Omit<WebhookEndpointRow, 'developer_id'>[]> {
  const { rows } = await db.query<Omit<WebhookEndpointRow, 'developer_id'>>(
    `select id, url, secret, disabled_at, created_at from webhook_endpoints where developer_id = $1
      order by created_at desc limit $2`,
    [developerId, limit],
  );
  return rows;
}

/** One of the developer's endpoints by id, or null (another developer's is null too). */
export async function findEndpoint(db: Queryable, developerId: string, id: string): Promise<WebhookEndpointRow | null> {
  const { rows } = await db.query<WebhookEndpointRow>(
    'select * from webhook_endpoints where developer_id = $1 and id = $2',
    [developerId, id],
  );
  return rows[0] ?? null;
}

/**
 * Removes an endpoint with its messages and delivery log (cascade); a later job naming the address makes a new
 * one with a new secret. False when the developer has no such endpoint.
 */
export async function deleteEndpoint(db: Queryable, developerId: string, id: string): Promise<boolean> {
  const r = await db.query('delete from webhook_endpoints where developer_id = $1 and id = $2', [developerId, id]);
  return r.rowCount === 1;
}
