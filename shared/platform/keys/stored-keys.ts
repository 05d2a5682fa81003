import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Config } from '../../kernel/config/index.ts';
import type { Db, Queryable } from '../../kernel/db/pool.ts';
import type { StoredKeyLookup } from './provider-key.ts';
import { masterKeys, type MasterKey } from '../metering/settings.ts';

export interface ProviderKeyRow {
  developer_id: string;
  provider: string;
  key_id: string;
  iv: Buffer;
  ciphertext: Buffer;
  auth_tag: Buffer;
  last_four: string;
  created_at: Date;
  verified_at: Date | null;
}

export interface SealedKey {
  keyId: string;
  iv: Buffer;
  ciphertext: Buffer;
  authTag: Buffer;
}

/**
 * AES-256-GCM with a fresh 96-bit IV per key. The developer id and provider are the additional authenticated
 * data, so a ciphertext copied onto another developer's or provider's row fails to decrypt.
 */
export class ProviderKeyCipher {
  private readonly byId: Map<string, Buffer>;
  constructor(private readonly keys: MasterKey[]) {
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  get currentKeyId(): string {
    return this.keys[0]!.id;
  }

  /** Whether a master key of this id is configured (tells "key removed" from "data does not decrypt"). */
  hasKey(id: string): boolean {
    return this.byId.has(id);
  }

  seal(developerId: string, provider: string, plaintext: string): SealedKey {
    const master = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', master.key, iv);
    cipher.setAAD(aad(developerId, provider));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: master.id, iv, ciphertext, authTag: cipher.getAuthTag() };
  }

  /** Null when the master key is gone or the data was tampered with (never a thrown secret). */
  open(developerId: string, provider: string, sealed: SealedKey): string | null {
    const key = this.byId.get(sealed.keyId);
    if (!key) return null;
    try {
      const d = createDecipheriv('aes-256-gcm', key, sealed.iv);
      d.setAAD(aad(developerId, provider));
      d.setAuthTag(sealed.authTag);
      return Buffer.concat([d.update(sealed.ciphertext), d.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

function aad(developerId: string, provider: string): Buffer {
  return Buffer.from(`${developerId}\u0000${provider}`);
}

const cipherMemo = new WeakMap<Config, ProviderKeyCipher>();
export function providerKeyCipher(config: Config): ProviderKeyCipher {
  let c = cipherMemo.get(config);
  if (!c) {
    c = new ProviderKeyCipher(masterKeys(config));
    cipherMemo.set(config, c);
  }
  return c;
}

export const PROVIDER_KEY_COLUMNS =
  'developer_id, provider, key_id, iv, ciphertext, auth_tag, last_four, created_at, verified_at';

export async function upsertProviderKey(
  db: Queryable,
  cipher: ProviderKeyCipher,
  developerId: string,
  provider: string,
  apiKey: string,
): Promise<{ row: ProviderKeyRow; created: boolean }> {
  const s = cipher.seal(developerId, provider, apiKey);
  const { rows } = await db.query<ProviderKeyRow & { inserted: boolean }>(
    `insert into provider_keys (developer_id, provider, key_id, iv, ciphertext, auth_tag, last_four)
     values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (developer_id, provider) do update
        set key_id = excluded.key_id, iv = excluded.iv, ciphertext = excluded.ciphertext,
            auth_tag = excluded.auth_tag, last_four = excluded.last_four, created_at = now(), verified_at = null
     returning ${PROVIDER_KEY_COLUMNS}, (xmax = 0) as inserted`,
    [developerId, provider, s.keyId, s.iv, s.ciphertext, s.authTag, apiKey.slice(-4)],
  );
  const { inserted, ...row } = rows[0]!;
  return { row, created: inserted };
}

export async function listProviderKeys(db: Queryable, developerId: string): Promise<ProviderKeyRow[]> {
  const { rows } = await db.query<ProviderKeyRow>(
    `select ${PROVIDER_KEY_COLUMNS} from provider_keys where developer_id = $1 order by provider`,
    [developerId],
  );
  return rows;
}

export async function getProviderKeyRow(
  db: Queryable,
  developerId: string,
  provider: string,
): Promise<ProviderKeyRow | null> {
  const { rows } = await db.query<ProviderKeyRow>(
    `select ${PROVIDER_KEY_COLUMNS} from provider_keys where developer_id = $1 and provider = $2`,
    [developerId, provider],
  );
  return rows[0] ?? null;
}

export async function deleteProviderKey(db: Queryable, developerId: string, provider: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from provider_keys where developer_id = $1 and provider = $2', [
    developerId,
    provider,
  ]);
  return (rowCount ?? 0) > 0;
}

export async function markProviderKeyVerified(
  db: Queryable,
  developerId: string,
  provider: string,
): Promise<Date | null> {
  const { rows } = await db.query<{ verified_at: Date }>(
    'update provider_keys set verified_at = now() where developer_id = $1 and provider = $2 returning verified_at',
    [developerId, provider],
  );
  return rows[0]?.verified_at ?? null;
}

/** The sealed value of a row, as the cipher takes it. */
export function sealedOf(row: ProviderKeyRow): SealedKey {
  return { keyId: row.key_id, iv: row.iv, ciphertext: row.ciphertext, authTag: row.auth_tag };
}

/**
 * Decrypts a row; a row sealed under an older master key is re-sealed under the current one (rotation). The
 * re-seal is a compare-and-set on the sealed value read (key id and IV, fresh for every seal): a key the developer
 * replaced meanwhile, or one a re-encryption run already re-sealed, is left as it is.
 */
export async function openProviderKey(
  db: Queryable,
  cipher: ProviderKeyCipher,
  row: ProviderKeyRow,
): Promise<string | null> {
  const plain = cipher.open(row.developer_id, row.provider, sealedOf(row));
  if (plain !== null && row.key_id !== cipher.currentKeyId) {
    const s = cipher.seal(row.developer_id, row.provider, plain);
    await db.query(
      `update provider_keys set key_id = $3, iv = $4, ciphertext = $5, auth_tag = $6
        where developer_id = $1 and provider = $2 and key_id = $7 and iv = $8`,
      [row.developer_id, row.provider, s.keyId, s.iv, s.ciphertext, s.authTag, row.key_id, row.iv],
    );
  }
  return plain;
}

/** The lookup engines use (header → stored → platform): the developer's stored key for a vendor, decrypted. */
export function createStoredKeyLookup(deps: { db: Db; config: Config }): StoredKeyLookup {
  const cipher = providerKeyCipher(deps.config);
  return {
    async get(developerId, vendor) {
      const row = await getProviderKeyRow(deps.db, developerId, vendor);
      return row ? openProviderKey(deps.db, cipher, row) : null;
    },
  };
}
