import type { Queryable } from '../../kernel/db/pool.ts';
import { creditsSince } from '../../platform/metering/ledger-reads.ts';

/** Daily caps in credits per UTC day: the developer's (all keys) and each key's own. Null = no cap. */
export interface SpendingCaps {
  dailyCredits: number | null;
  keys: Array<{ keyId: string; dailyCredits: number }>;
}

/** Start of the current UTC day: daily caps count from here. */
export function utcDayStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

export async function readSpendingCaps(db: Queryable, developerId: string): Promise<SpendingCaps> {
  const { rows } = await db.query<{ api_key_id: string; daily_credits: string | number }>(
    'select api_key_id, daily_credits from spending_caps where developer_id = $1 order by api_key_id',
    [developerId],
  );
  const own = rows.find((r) => r.api_key_id === '');
  return {
    dailyCredits: own ? Number(own.daily_credits) : null,
    keys: rows
      .filter((r) => r.api_key_id !== '')
      .map((r) => ({ keyId: r.api_key_id, dailyCredits: Number(r.daily_credits) })),
  };
}

/** Sets (a number) or removes (null) the developer's daily cap (`keyId` null) or one key's. */
export async function writeSpendingCap(
  db: Queryable,
  developerId: string,
  keyId: string | null,
  dailyCredits: number | null,
): Promise<void> {
  if (dailyCredits === null) {
    await db.query('delete from spending_caps where developer_id = $1 and api_key_id = $2', [developerId, keyId ?? '']);
    return;
  }
  await db.query(
    `insert into spending_caps (developer_id, api_key_id, daily_credits) values ($1, $2, $3)
     on conflict (developer_id, api_key_id) do update set daily_credits = excluded.daily_credits, updated_at = now()`,
    [developerId, keyId ?? '', dailyCredits],
  );
}

/** What is left today under the developer's cap and the key's, whichever is tighter; null when neither is set. */
export async function dailyHeadroom(
  db: Queryable,
  developerId: string,
  apiKeyId: string | null,
  now = new Date(),
): Promise<{ remaining: number; cap: number; scope: 'developer' | 'key' } | null> {
  const { rows } = await db.query<{ api_key_id: string; daily_credits: string | number }>(
    `select api_key_id, daily_credits from spending_caps
      where developer_id = $1 and (api_key_id = '' or api_key_id = $2)`,
    [developerId, apiKeyId ?? ''],
  );
  if (rows.length === 0) return null;
  const since = utcDayStart(now);
  let best: { remaining: number; cap: number; scope: 'developer' | 'key' } | null = null;
  for (const r of rows) {
    const cap = Number(r.daily_credits);
    const scope = r.api_key_id === '' ? 'developer' : 'key';
    const spent = await creditsSince(db, developerId, since, scope === 'key' ? r.api_key_id : null);
    const remaining = cap - spent;
    if (!best || remaining < best.remaining) best = { remaining, cap, scope };
  }
  return best;
}

/** Per-call limits a session was created with (the create body over the agent's defaults) and the key behind it. */
export interface SessionLimitsRow {
  apiKeyId: string | null;
  maxDurationSeconds: number | null;
  maxCredits: number | null;
}

export async function insertSessionLimits(
  db: Queryable,
  sessionId: string,
  developerId: string,
  l: SessionLimitsRow,
): Promise<void> {
  await db.query(
    `insert into session_limits (session_id, developer_id, api_key_id, max_duration_seconds, max_credits)
     values ($1, $2, $3, $4, $5) on conflict (session_id) do nothing`,
    [sessionId, developerId, l.apiKeyId, l.maxDurationSeconds, l.maxCredits],
  );
}

export async function readSessionLimits(
  db: Queryable,
  sessionId: string,
  developerId: string,
): Promise<SessionLimitsRow | null> {
  const { rows } = await db.query<{
    api_key_id: string | null;
    max_duration_seconds: number | null;
    max_credits: string | number | null;
  }>(
    'select api_key_id, max_duration_seconds, max_credits from session_limits where session_id = $1 and developer_id = $2',
    [sessionId, developerId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    apiKeyId: r.api_key_id,
    maxDurationSeconds: r.max_duration_seconds,
    maxCredits: r.max_credits === null ? null : Number(r.max_credits),
  };
}
