import type { Config } from '../../kernel/config/index.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import {
  PROVIDER_KEY_COLUMNS,
  providerKeyCipher,
  sealedOf,
  type ProviderKeyCipher,
  type ProviderKeyRow,
} from '../../platform/keys/stored-keys.ts';

export interface ReencryptFailure {
  developerId: string;
  provider: string;
  /** The master key id the row is sealed under. */
  keyId: string;
  reason: string;
}

export interface ReencryptReport {
  currentKeyId: string;
  dryRun: boolean;
  /** Rows read. */
  scanned: number;
  /** Re-sealed under the current master key by this run (in a dry run: that would be). */
  resealed: number;
  /** Already under the current key: stored since the rotation, or re-sealed meanwhile by a read or another run. */
  alreadyCurrent: number;
  /** Deleted by their developer while the run was going. */
  deleted: number;
  failed: ReencryptFailure[];
}

export interface ReencryptOptions {
  /** Rows read and written per statement (default 500). */
  batchSize?: number;
  /** Count and check that every old row opens, write nothing. */
  dryRun?: boolean;
  /** Called after each batch with the totals so far. */
  onBatch?: (progress: ReencryptReport) => void;
}

/** A row that changes between our read and our write is read again; one that keeps changing is reported. */
const ATTEMPTS = 3;

/**
 * Re-seals every stored provider key that is sealed under an older master key with the current one (the first of
 * PROVIDER_KEYS_ENCRYPTION_KEYS), so an old master key can be removed. Walks the table in primary-key order in
 * batches (keyset pagination: rows added behind the cursor are stored under the current key anyway).
 *
 * Safe next to the running platform and a second run: each batch is one UPDATE that is a compare-and-set on the
 * sealed value read (key id and IV, which is fresh for every seal), so a key the developer replaced meanwhile, or
 * one re-sealed by a read (openProviderKey) or another run, is never overwritten with what this run decrypted; such
 * a row is read again. A row that does not open (its master key is no longer configured, or the data is damaged)
 * is reported with its ids and left as it is.
 */
export async function reencryptProviderKeys(
  db: Queryable,
  config: Config,
  opts: ReencryptOptions = {},
): Promise<ReencryptReport> {
  const cipher = providerKeyCipher(config);
  const batchSize = opts.batchSize ?? 500;
  const report: ReencryptReport = {
    currentKeyId: cipher.currentKeyId,
    dryRun: opts.dryRun ?? false,
    scanned: 0,
    resealed: 0,
    alreadyCurrent: 0,
    deleted: 0,
    failed: [],
  };
  // Ids are never empty, so ('', '') sorts before every row.
  let after: [string, string] = ['', ''];
  for (;;) {
    const { rows } = await db.query<ProviderKeyRow>(
      `select ${PROVIDER_KEY_COLUMNS} from provider_keys
        where (developer_id, provider) > ($1, $2)
        order by developer_id, provider
        limit $3`,
      [after[0], after[1], batchSize],
    );
    if (rows.length === 0) break;
    report.scanned += rows.length;
    let pending = rows;
    for (let attempt = 0; attempt < ATTEMPTS && pending.length > 0; attempt++) {
      pending = await resealBatch(db, cipher, pending, report);
    }
    for (const row of pending) report.failed.push(failure(row, 'changed on every attempt to re-seal it; run again'));
    const last = rows.at(-1)!;
    after = [last.developer_id, last.provider];
    opts.onBatch?.({ ...report, failed: [...report.failed] });
    if (rows.length < batchSize) break;
  }
  return report;
}

/** Re-seals what needs it in one statement; returns the rows that changed under it, as they are now. */
async function resealBatch(
  db: Queryable,
  cipher: ProviderKeyCipher,
  rows: ProviderKeyRow[],
  report: ReencryptReport,
): Promise<ProviderKeyRow[]> {
  const todo: { row: ProviderKeyRow; plain: string }[] = [];
  for (const row of rows) {
    if (row.key_id === cipher.currentKeyId) {
      report.alreadyCurrent++;
      continue;
    }
    const plain = cipher.open(row.developer_id, row.provider, sealedOf(row));
    if (plain === null) {
      report.failed.push(
        failure(
          row,
          cipher.hasKey(row.key_id)
            ? 'does not decrypt under its master key (damaged, or copied from another row)'
            : `master key "${row.key_id}" is not in PROVIDER_KEYS_ENCRYPTION_KEYS`,
        ),
      );
    } else if (report.dryRun) report.resealed++;
    else todo.push({ row, plain });
  }
  if (todo.length === 0) return [];
  const sealed = todo.map(({ row, plain }) => cipher.seal(row.developer_id, row.provider, plain));
  const { rows: done } = await nothingOnDeadlock(
    db.query<{ developer_id: string; provider: string }>(
      `update provider_keys p
        set key_id = $1, iv = v.iv, ciphertext = v.ciphertext, auth_tag = v.auth_tag
       from unnest($2::text[], $3::text[], $4::text[], $5::bytea[], $6::bytea[], $7::bytea[], $8::bytea[])
            as v(developer_id, provider, old_key_id, old_iv, iv, ciphertext, auth_tag)
      where p.developer_id = v.developer_id and p.provider = v.provider
        and p.key_id = v.old_key_id and p.iv = v.old_iv
      returning p.developer_id, p.provider`,
      [
        cipher.currentKeyId,
        todo.map((t) => t.row.developer_id),
        todo.map((t) => t.row.provider),
        todo.map((t) => t.row.key_id),
        todo.map((t) => t.row.iv),
        sealed.map((s) => s.iv),
        sealed.map((s) => s.ciphertext),
        sealed.map((s) => s.authTag),
      ],
    ),
  );
  report.resealed += done.length;
  if (done.length === todo.length) return [];
  const written = new Set(done.map((d) => `${d.developer_id}\u0000${d.provider}`));
  const lost = todo.map((t) => t.row).filter((r) => !written.has(`${r.developer_id}\u0000${r.provider}`));
  const { rows: now } = await db.query<ProviderKeyRow>(
    `select ${PROVIDER_KEY_COLUMNS} from provider_keys
      where (developer_id, provider) in (select * from unnest($1::text[], $2::text[]))`,
    [lost.map((r) => r.developer_id), lost.map((r) => r.provider)],
  );
  report.deleted += lost.length - now.length;
  return now;
}

/**
 * Two runs at once lock overlapping rows in the order of their plans, so Postgres may abort one's statement as a
 * deadlock (40P01). Nothing of that statement was written: its rows are read again and retried like rows that
 * changed under it.
 */
async function nothingOnDeadlock<R>(q: Promise<{ rows: R[] }>): Promise<{ rows: R[] }> {
  return q.catch((e: { code?: string }) => {
    if (e.code === '40P01') return { rows: [] };
    throw e;
  });
}

function failure(row: ProviderKeyRow, reason: string): ReencryptFailure {
  return { developerId: row.developer_id, provider: row.provider, keyId: row.key_id, reason };
}
