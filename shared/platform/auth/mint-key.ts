import type { CreatedKey } from '../../contracts/keys.ts';
import { insertApiKey } from '../../kernel/db/api-keys.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key-format.ts';

export const SHOWN_ONCE = 'Store this key now: it is shown only once and cannot be retrieved later.';

/** Mints a key for a developer: the api's POST /v1/keys and rotation, the CLI, test and benchmark set-up. */
export async function mintKey(
  db: Queryable,
  developerId: string,
  name: string,
  expiresInDays?: number,
): Promise<CreatedKey> {
  const raw = generateApiKey();
  const expiresAt = expiresInDays ? new Date(Date.now() + expiresInDays * 86_400_000) : null;
  const row = await insertApiKey(db, {
    developerId,
    name,
    prefix: displayPrefix(raw),
    hash: hashApiKey(raw),
    expiresAt,
  });
  return {
    id: row.id,
    key: raw,
    name: row.name,
    ...(row.expires_at ? { expiresAt: row.expires_at.toISOString() } : {}),
    message: SHOWN_ONCE,
  };
}
