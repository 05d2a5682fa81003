/**
 * Object key layout: everything a developer owns sits under their id, so deleting or exporting a tenant is one
 * prefix. `kind` is a folder per artifact type (uploads, recordings, video-inputs, video-outputs, …).
 */
export function objectKey(developerId: string, kind: string, ...parts: string[]): string {
  return [developerId, kind, ...parts].map(safeSegment).join('/');
}

/** One path segment from any text: our characters only, and never empty, `.` or `..` (assertObjectKey). */
function safeSegment(part: string): string {
  const s = part.replace(/[^A-Za-z0-9._-]/g, '_');
  if (s === '') return '_';
  return s === '.' || s === '..' ? s.replace(/\./g, '_') : s;
}

/** The longest object key accepted (S3's own limit is 1024 bytes). */
export const MAX_OBJECT_KEY_CHARS = 1024;

/**
 * A key the storage layer refuses. Object keys are names, never paths: a store on a file system (our embedded S3,
 * MinIO) resolves `a/../b` to `b`, so `<devA>/../<devB>/recordings/…` read another tenant's call (issue #35).
 * `reason` is ours (no part of the key), so it can be shown to whoever gave the key.
 */
export class UnsafeObjectKeyError extends Error {
  override name = 'UnsafeObjectKeyError';
  constructor(readonly reason: string) {
    super(`object key refused: it ${reason}`);
  }
}

// Control characters (C0, DEL, C1): never part of a name, and some stores or logs treat them specially.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Why a key is not a plain name (null when it is): what assertObjectKey refuses. */
export function unsafeKeyReason(key: string): string | null {
  if (key.length === 0) return 'is empty';
  if (key.length > MAX_OBJECT_KEY_CHARS) return `is longer than ${MAX_OBJECT_KEY_CHARS} characters`;
  if (CONTROL.test(key)) return 'contains a control character';
  if (key.includes('\\')) return 'contains a backslash';
  // A store that decodes percent-encoding would see another name (`%2e%2e` is `..`).
  if (key.includes('%')) return 'contains a percent sign (percent-encoding)';
  for (const segment of key.split('/')) {
    if (segment === '') return 'has an empty segment (a leading, trailing or double slash)';
    if (segment === '.' || segment === '..') return 'has a "." or ".." segment';
  }
  return null;
}

/** Throws UnsafeObjectKeyError unless `key` is a plain object name (see unsafeKeyReason). */
export function assertObjectKey(key: string): string {
  const reason = unsafeKeyReason(key);
  if (reason !== null) throw new UnsafeObjectKeyError(reason);
  return key;
}

export function isUnsafeObjectKeyError(e: unknown): e is UnsafeObjectKeyError {
  return e instanceof Error && e.name === 'UnsafeObjectKeyError';
}
