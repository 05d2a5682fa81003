/**
 * Object key layout: everything a developer owns sits under their id, so deleting or exporting a tenant is one
 * prefix. `kind` is a folder per artifact type (uploads, recordings, video-inputs, video-outputs, …).
 */
export function objectKey(developerId: string, kind: string, ...parts: string[]): string {
  return [developerId, kind, ...parts].map((p) => p.replace(/[^A-Za-z0-9._-]/g, '_')).join('/');
}
