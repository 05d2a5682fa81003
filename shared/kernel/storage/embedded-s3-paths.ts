import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { unsafeKeyReason } from './keys.ts';

/**
 * s3rver keeps an object as a file at `path.join(dir, bucket, ...key)`, so a key with `..` segments (sent raw or
 * percent-encoded: its router decodes them) named a file outside the key's prefix, or outside the data folder
 * altogether (issue #35). The Storage client already refuses such keys; this refuses them at the server too, for
 * any client, before s3rver sees the request: the bucket and the key must be plain names (unsafeKeyReason), and a
 * multipart upload id (a folder name too) letters and digits only. MinIO's answer for a bad name, 400.
 */
export function refuseUnsafePaths(handler: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (isSafeRequest(req.url ?? '/')) return void handler(req, res);
    res.writeHead(400, { 'content-type': 'application/xml' });
    res.end(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>XMinioInvalidObjectName</Code>' +
        '<Message>Object name contains unsupported characters.</Message></Error>',
    );
  };
}

function isSafeRequest(url: string): boolean {
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return false;
  }
  if (!path.startsWith('/')) return false;
  const rest = path.slice(1);
  if (rest === '') return true; // ListBuckets
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const key = slash === -1 ? '' : rest.slice(slash + 1);
  if (unsafeKeyReason(bucket) !== null) return false;
  if (key !== '' && unsafeKeyReason(key) !== null) return false;
  const uploadId = new URLSearchParams(q === -1 ? '' : url.slice(q + 1)).get('uploadId');
  return uploadId === null || /^[A-Za-z0-9]{1,128}$/.test(uploadId);
}
