/**
 * True when the object store refused a write for lack of space: MinIO's (and our embedded S3's) 507
 * `XMinioStorageFull`, or a 507 from any S3, possibly wrapped (`cause`). The request that needed the space gets
 * 507 `storage_full`; nothing else is affected.
 */
export function isStorageFull(e: unknown, depth = 0): boolean {
  if (!e || typeof e !== 'object' || depth > 4) return false;
  const err = e as { name?: string; Code?: string; cause?: unknown; $metadata?: { httpStatusCode?: number } };
  if (err.name === 'XMinioStorageFull' || err.Code === 'XMinioStorageFull') return true;
  if (err.$metadata?.httpStatusCode === 507) return true;
  return isStorageFull(err.cause, depth + 1);
}
