import type { Queryable } from './pool.ts';

export interface IdempotencyRow {
  request_hash: string;
  state: 'in_progress' | 'done';
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: Buffer | null;
  created_at: Date;
}

const TTL = "interval '24 hours'";

/** Claims a key for a new request; returns null when this call claimed it, else the existing record. */
export async function claimIdempotencyKey(
  db: Queryable,
  r: { developerId: string; key: string; method: string; path: string; hash: string },
): Promise<IdempotencyRow | null> {
  // A record older than the replay window no longer binds the key.
  await db.query(`delete from idempotency_keys where developer_id = $1 and key = $2 and created_at < now() - ${TTL}`, [
    r.developerId,
    r.key,
  ]);
  const inserted = await db.query(
    `insert into idempotency_keys (developer_id, key, method, path, request_hash, state)
     values ($1, $2, $3, $4, $5, 'in_progress') on conflict do nothing`,
    [r.developerId, r.key, r.method, r.path, r.hash],
  );
  if (inserted.rowCount === 1) return null;
  const { rows } = await db.query<IdempotencyRow>(
    `select request_hash, state, response_status, response_headers, response_body, created_at
       from idempotency_keys where developer_id = $1 and key = $2`,
    [r.developerId, r.key],
  );
  return rows[0] ?? null;
}

export async function completeIdempotencyKey(
  db: Queryable,
  developerId: string,
  key: string,
  status: number,
  headers: Record<string, string>,
  body: Buffer | null,
): Promise<void> {
  await db.query(
    `update idempotency_keys set state = 'done', response_status = $3, response_headers = $4, response_body = $5
      where developer_id = $1 and key = $2`,
    [developerId, key, status, headers, body],
  );
}

export async function releaseIdempotencyKey(db: Queryable, developerId: string, key: string): Promise<void> {
  await db.query('delete from idempotency_keys where developer_id = $1 and key = $2', [developerId, key]);
}
