import type { Authenticator } from '../../shared/platform/auth/authenticator.ts';
import { mintKey, SHOWN_ONCE } from '../../shared/platform/auth/mint-key.ts';
import { listActiveKeys, lockActiveKey, revokeKey, type ApiKeyRow } from '../../shared/kernel/db/api-keys.ts';
import { withTransaction, type Db } from '../../shared/kernel/db/pool.ts';
import type { KeyListItem, RotatedKey } from '../../shared/contracts/keys.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { decodeCursor, toPage, type Page } from '../../shared/kernel/pagination.ts';

export async function listKeys(
  db: Db,
  developerId: string,
  limit: number,
  cursor?: string,
): Promise<Page<KeyListItem>> {
  const rows = await listActiveKeys(db, developerId, limit + 1, decodeCursor(cursor));
  return toPage(rows, limit, toListItem);
}

export async function deleteKey(db: Db, auth: Authenticator, developerId: string, id: string): Promise<void> {
  const revoked = await revokeKey(db, developerId, id, 'revoked');
  if (!revoked) throw ApiError.notFound('API key', id);
  await auth.invalidateKey(revoked.key_hash);
}

/**
 * New key and old key revoked in one transaction: there is no moment where both or neither are valid. The old
 * row is locked first, so two concurrent rotations of one key give one winner and one 404.
 */
export async function rotateKey(db: Db, auth: Authenticator, developerId: string, id: string): Promise<RotatedKey> {
  const { created, oldHash } = await withTransaction(db, async (tx) => {
    const old = await lockActiveKey(tx, developerId, id);
    if (!old) throw ApiError.notFound('API key', id);
    const days = old.expires_at
      ? Math.max(1, Math.ceil((old.expires_at.getTime() - Date.now()) / 86_400_000))
      : undefined;
    const created = await mintKey(tx, developerId, old.name, days);
    const revoked = await revokeKey(tx, developerId, id, 'rotated', created.id);
    return { created, oldHash: revoked!.key_hash };
  });
  await auth.invalidateKey(oldHash);
  return { id: created.id, key: created.key, name: created.name, message: SHOWN_ONCE };
}

function toListItem(r: ApiKeyRow): KeyListItem {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    createdAt: r.created_at.toISOString(),
    ...(r.expires_at ? { expiresAt: r.expires_at.toISOString() } : {}),
    ...(r.last_used_at ? { lastUsedAt: r.last_used_at.toISOString() } : {}),
  };
}
