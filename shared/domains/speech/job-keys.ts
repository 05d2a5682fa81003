import { eraseJobKeys, openJobKey, type SealedKeyColumns } from '../../platform/keys/job-key-columns.ts';
import { providerKeyCipher } from '../../platform/keys/stored-keys.ts';
import type { Config } from '../../kernel/config/index.ts';
import { byokHeaderFor } from '../../contracts/providers.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { Infra } from '../../platform/infra.ts';

/** The transcription job a key is bound to. */
export interface TranscriptionJobRef {
  id: string;
  developerId: string;
}

/** Naming the job in the cipher's additional data: a sealed key copied onto another job or vendor does not open. */
const context = (jobId: string, vendor: string) => `transcription_job:${jobId}:${vendor}`;

/** Seals the caller's header key onto a new job; call it in the transaction that inserts the job. */
export async function sealTranscriptionKey(
  db: Queryable,
  config: Config,
  job: TranscriptionJobRef,
  vendor: string,
  key: string,
): Promise<void> {
  const s = providerKeyCipher(config).seal(job.developerId, context(job.id, vendor), key);
  await db.query(
    `insert into transcription_job_keys (job_id, vendor, key_id, iv, ciphertext, auth_tag)
     values ($1, $2, $3, $4, $5, $6)`,
    [job.id, vendor, s.keyId, s.iv, s.ciphertext, s.authTag],
  );
}

/**
 * The job's caller key as the header map resolveProviderKey reads, opened just before the vendor call, so the worker resolves
 * header → stored → platform exactly like the synchronous route and the key counts as the caller's (unmetered).
 * `{}` when the caller sent none. A key that was sent but is gone (erased by a finished run, its master key
 * removed, tampered with) fails the job rather than quietly running on a stored or platform key.
 */
export async function transcriptionKeyHeaders(infra: Infra, job: TranscriptionJobRef): Promise<Record<string, string>> {
  const { rows } = await infra.db.query<SealedKeyColumns & { vendor: string }>(
    'select vendor, key_id, iv, ciphertext, auth_tag from transcription_job_keys where job_id = $1',
    [job.id],
  );
  const row = rows[0];
  const name = row ? byokHeaderFor(row.vendor) : null;
  if (!row || !name) return {};
  const key = openJobKey(infra.config, job.developerId, context(job.id, row.vendor), row);
  if (key === null) {
    throw new ApiError('provider_unavailable', {
      provider: row.vendor,
      detail: `The ${row.vendor} key sent with this job is no longer available; submit the job again with the key.`,
    });
  }
  return { [name]: key };
}

/** Erases a finished job's sealed key; the row stays as the record that the job ran on the caller's key. */
export function eraseTranscriptionKey(db: Queryable, jobId: string): Promise<void> {
  return eraseJobKeys(db, 'transcription_job_keys', jobId);
}
