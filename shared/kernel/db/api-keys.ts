import { newId } from '../ids.ts';
import type { Queryable } from './pool.ts';

export interface ApiKeyRow {
  id: string;
  developer_id: string;
  name: string;
  prefix: string;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  revoked_reason: 'revoked' | 'rotated' | null;
}

/** What authentication needs to know about a key, joined with its developer. */
export interface KeyAuthRow extends ApiKeyRow {
  tier: string;
}

const COLUMNS = 'id, developer_id, name, prefix, created_at, expires_at, last_used_at, revoked_at, revoked_reason';

export async function insertApiKey(
  db: Queryable,
  k: { developerId: string; name: string; prefix: string; hash: Buffer; expiresAt: Date | null },
): Promise<ApiKeyRow> {
  const { rows } = await db.query<ApiKeyRow>(
    `insert into api_keys (id, developer_id, name, prefix, key_hash, expires_at) values ($1, $2, $3, $4, $5, $6)
     returning ${COLUMNS}`,
    [newId('apiKey'), k.developerId, k.name, k.prefix, k.hash, k.expiresAt],
  );
  return rows[0]!;
}

export async function findKeyByHash(db: Queryable, hash: Buffer): Promise<KeyAuthRow | null> {
  const { rows } = await db.query<KeyAuthRow>(
    `select ${COLUMNS.split(', ')
      .map((c) => `k.${c}`)
      .join(', ')}, d.tier
       from api_keys k join developers d on d.id = k.developer_id where k.key_hash = $1`,
    [hash],
  );
  return rows[0] ?? null;
}

/** Active keys of one developer, newest first, for cursor pagination. */
export async function listActiveKeys(
  db: Queryable,
  developerId: string,
  limit: number,
  beforeId: string | null,
): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `select ${COLUMNS} from api_keys
      where developer_id = $1 and revoked_at is null and ($2::text is null or id < $2)
      order by id desc limit $3`,
    [developerId, beforeId, limit],
  );
  return rows;
}

/** Locks an active key of this developer for update (rotation), or returns null. */
export async function lockActiveKey(db: Queryable, developerId: string, id: string): Promise<ApiKeyRow | null> {
  const { rows } = await db.query<ApiKeyRow>(
    `select ${COLUMNS} from api_keys where id = $1 and developer_id = $2 and revoked_at is null for update`,
    [id, developerId],
  );
  return rows[0] ?? null;
}

export async function revokeKey(
  db: Queryable,
  developerId: string,
  id: string,
  reason: 'revoked' | 'rotated',
  replacedBy: string | null = null,
): Promise<{ key_hash: Buffer } | null> {
  const { rows } = await db.query<{ key_hash: Buffer }>(
    `update api_keys set revoked_at = now(), revoked_reason = $3, replaced_by = $4
      where id = $1 and developer_id = $2 and revoked_at is null returning key_hash`,
    [id, developerId, reason, replacedBy],
  );
  return rows[0] ?? null;
}

export async function touchKeys(db: Queryable, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `update api_keys set last_used_at = now()
      where id = any($1) and (last_used_at is null or last_used_at < now() - interval '10 seconds')`,
    [ids],
  );
}

/** Ids of the developer's keys of this name, revoked ones included (an agent test run's keys, one per attempt). */
export async function keyIdsNamed(db: Queryable, developerId: string, name: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(`select id from api_keys where developer_id = $1 and name = $2`, [
    developerId,
    name,
  ]);
  return rows.map((r) => r.id);
}
