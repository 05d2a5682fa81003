import type { Config } from '../../kernel/config/index.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import { providerKeyCipher } from './stored-keys.ts';

/**
 * A job's sealed caller key (video_job_keys, transcription_job_keys): the stored-provider-key cipher's columns,
 * all null once the job finished and the key was erased.
 */
export interface SealedKeyColumns {
  key_id: string | null;
  iv: Buffer | null;
  ciphertext: Buffer | null;
  auth_tag: Buffer | null;
}

/** The plain key, or null when it was erased, its master key is gone, or it was tampered with or moved. */
export function openJobKey(config: Config, owner: string, context: string, row: SealedKeyColumns): string | null {
  if (!row.key_id || !row.iv || !row.ciphertext || !row.auth_tag) return null;
  return providerKeyCipher(config).open(owner, context, {
    keyId: row.key_id,
    iv: row.iv,
    ciphertext: row.ciphertext,
    authTag: row.auth_tag,
  });
}

/**
 * Erases a finished job's sealed keys; call it in the transaction that finishes the job. The rows stay (without
 * their secret) as the record that the job ran on the caller's key.
 */
export async function eraseJobKeys(
  db: Queryable,
  table: 'video_job_keys' | 'transcription_job_keys',
  jobId: string,
): Promise<void> {
  await db.query(
    `update ${table} set key_id = null, iv = null, ciphertext = null, auth_tag = null, erased_at = now()
      where job_id = $1 and erased_at is null`,
    [jobId],
  );
}
