import {
  eraseJobKeys as eraseSealedKeys,
  openJobKey,
  type SealedKeyColumns,
} from '../../platform/keys/job-key-columns.ts';
import { providerKeyCipher } from '../../platform/keys/stored-keys.ts';
import type { Config } from '../../kernel/config/index.ts';
import { byokHeaderFor } from '../../contracts/providers.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import type { Infra } from '../../platform/infra.ts';
import { VideoFailure } from './failure.ts';
import type { VideoJobRow } from './store.ts';

/** Incoming request headers (lower-cased names), as Fastify and resolveProviderKey see them. */
export type RequestHeaders = Record<string, string | string[] | undefined>;

/** The part of a job its keys are bound to. */
export type JobRef = Pick<VideoJobRow, 'id' | 'owner_id'>;

/**
 * The cipher's "provider" slot is its additional authenticated data (with the owner); naming the job in it means
 * a sealed key copied onto another job, vendor or developer does not open.
 */
function context(jobId: string, vendor: string): string {
  return `video_job:${jobId}:${vendor}`;
}

/**
 * The caller's `X-Provider-Key-<Vendor>` values for the vendors the job will call. Headers for other vendors are
 * not kept: a job must not hold a secret it has no use for.
 */
export function callerKeysFrom(headers: RequestHeaders, vendors: Iterable<string | undefined>): Map<string, string> {
  const keys = new Map<string, string>();
  for (const vendor of vendors) {
    const name = vendor ? byokHeaderFor(vendor) : null;
    const raw = name ? headers[name] : undefined;
    // The same first-value rule as resolveProviderKey, so the job runs on the key the submission was checked with.
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (vendor && value) keys.set(vendor, value);
  }
  return keys;
}

/** Seals the caller's keys onto a new job; call it in the transaction that inserts the job. */
export async function sealJobKeys(
  db: Queryable,
  config: Config,
  job: JobRef,
  keys: ReadonlyMap<string, string>,
): Promise<void> {
  const cipher = providerKeyCipher(config);
  for (const [vendor, key] of keys) {
    const s = cipher.seal(job.owner_id, context(job.id, vendor), key);
    await db.query(
      `insert into video_job_keys (job_id, vendor, key_id, iv, ciphertext, auth_tag) values ($1, $2, $3, $4, $5, $6)`,
      [job.id, vendor, s.keyId, s.iv, s.ciphertext, s.authTag],
    );
  }
}

/**
 * The job's caller key for a vendor, opened just before the vendor call, as the header map resolveProviderKey
 * reads: the worker then resolves header → stored → platform exactly like a synchronous route, and the key counts
 * as the caller's. `{}` when the caller sent none (the job behaves as before). A key that was sent but cannot be
 * used (erased because the job already finished, e.g. a late duplicate run; its master key removed; tampered
 * with) fails the step instead of quietly running on the developer's stored key or the platform's.
 */
export async function jobKeyHeaders(infra: Infra, job: JobRef, vendor: string): Promise<Record<string, string>> {
  const name = byokHeaderFor(vendor);
  if (!name) return {};
  const { rows } = await infra.db.query<SealedKeyColumns>(
    'select key_id, iv, ciphertext, auth_tag from video_job_keys where job_id = $1 and vendor = $2',
    [job.id, vendor],
  );
  const row = rows[0];
  if (!row) return {};
  const key = openJobKey(infra.config, job.owner_id, context(job.id, vendor), row);
  if (key === null) {
    throw new VideoFailure(
      'provider_error',
      `The ${vendor} key sent with this job is no longer available; submit the job again with the key.`,
    );
  }
  return { [name]: key };
}

/**
 * Erases a finished job's sealed keys; call it in the transaction that moves the job to completed or failed. The
 * row stays (without its secret) as the record that the job ran on the caller's key for that vendor.
 */
export function eraseJobKeys(db: Queryable, jobId: string): Promise<void> {
  return eraseSealedKeys(db, 'video_job_keys', jobId);
}
