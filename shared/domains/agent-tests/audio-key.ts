import { unsafeKeyReason } from '../../kernel/storage/keys.ts';
import type { Storage } from '../../kernel/storage/s3.ts';

/**
 * One answer for a key that is not the developer's and for one that names nothing: two texts would tell a tenant
 * which of another tenant's keys exist (issue #35).
 */
export const AUDIO_KEY_NOT_FOUND =
  'no object with that key in your storage (a key starts with your developer id, like a call recording of yours)';

/** An audio turn's key whose object is not the developer's, or does not exist (AUDIO_KEY_NOT_FOUND). */
export class AudioKeyNotFoundError extends Error {
  override name = 'AudioKeyNotFoundError';
  constructor() {
    super(`audio.key: ${AUDIO_KEY_NOT_FOUND}`);
  }
}

/**
 * The developer's own object a scenario's `audio.key` names, or null. Resolved segment by segment, never as a
 * path: every segment a plain name (no `.`, `..`, empty, percent-encoded or control segments: unsafeKeyReason),
 * the first one the developer's id, and at least one below it. A prefix test alone let
 * `<devA>/../<devB>/recordings/…` read another tenant's call.
 */
export function ownObjectKey(developerId: string, key: string): string | null {
  if (unsafeKeyReason(key) !== null) return null;
  const [owner, ...below] = key.split('/');
  if (owner !== developerId || below.length === 0) return null;
  return [developerId, ...below].join('/');
}

const isMissing = (e: unknown) => {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  return err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata?.httpStatusCode === 404;
};

/** The bytes of the developer's own object; AudioKeyNotFoundError for another's or none (one error for both). */
export async function readOwnObject(storage: Storage, developerId: string, key: string): Promise<Buffer> {
  const own = ownObjectKey(developerId, key);
  if (own === null) throw new AudioKeyNotFoundError();
  try {
    return await storage.getBuffer(own);
  } catch (e) {
    if (isMissing(e)) throw new AudioKeyNotFoundError();
    throw e;
  }
}

/** Whether `key` names an object of the developer's own (false for another's and for none alike). */
export async function ownObjectExists(storage: Storage, developerId: string, key: string): Promise<boolean> {
  const own = ownObjectKey(developerId, key);
  return own !== null && (await storage.exists(own));
}
