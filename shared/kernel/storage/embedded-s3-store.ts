import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3rverStore } from 's3rver';

const require = createRequire(import.meta.url);
/** s3rver's own error type: what its request handler turns into an S3 XML error answer. */
const S3Error = require('s3rver/lib/models/error.js') as new (
  code: string,
  message: string,
) => Error & {
  status: number;
  expose: boolean;
};

/** MinIO's answer for a full disk (507 Insufficient Storage); shared/composition/http/errors.ts maps it to ours. */
export const STORAGE_FULL_CODE = 'XMinioStorageFull';

function storageFull(): Error {
  const e = new S3Error(STORAGE_FULL_CODE, 'Storage backend has reached its minimum free drive threshold.');
  e.status = 507;
  e.expose = true;
  return e;
}

const isDiskFull = (e: unknown) => ['ENOSPC', 'EDQUOT'].includes((e as NodeJS.ErrnoException)?.code ?? '');

/** Writes `content` to `path`, resolving once it is on disk; size and MD5 as s3rver reports them. */
async function writeContent(path: string, content: Buffer | NodeJS.ReadableStream): Promise<[number, string]> {
  await mkdir(dirname(path), { recursive: true });
  const md5 = createHash('md5');
  let size = 0;
  if (Buffer.isBuffer(content)) {
    await writeFile(path, content);
    return [content.length, md5.update(content).digest('hex')];
  }
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      md5.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(content as Readable, count, createWriteStream(path));
  return [size, md5.digest('hex')];
}

/**
 * Replaces s3rver's object and part writes, which pipe into a file stream without an error listener: a full disk
 * (ENOSPC) there was an uncaught exception that ended the whole process — every role in it and every live call —
 * and the request had already been answered 200. Here a write resolves only once it is on disk; a full disk
 * removes the partial file and fails that request alone with MinIO's 507 `XMinioStorageFull`.
 */
export function guardStoreWrites(store: S3rverStore): void {
  const putMetadata = store.putMetadata.bind(store);
  const guarded = async <T>(paths: string[], fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      await Promise.all(paths.map((p) => rm(p, { force: true }).catch(() => {})));
      throw isDiskFull(e) ? storageFull() : e;
    }
  };
  store.putObject = async (object) => {
    const path = store.getResourcePath(object.bucket, object.key, 'object');
    return guarded([path], async () => {
      const [size, md5] = await writeContent(path, object.content);
      await putMetadata(object.bucket, object.key, object.metadata, md5);
      return { size, md5 };
    });
  };
  store.putPart = async (bucket, uploadId, partNumber, content) => {
    const path = join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId, String(partNumber));
    return guarded([path, `${path}.md5`], async () => {
      const [size, md5] = await writeContent(path, content);
      await writeFile(`${path}.md5`, md5);
      return { size, md5 };
    });
  };
}
