import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { assertObjectKey } from './keys.ts';

export interface StorageOptions {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

/**
 * The one S3 client of a process. Every key is checked (assertObjectKey) before it goes out: keys are names, never
 * paths, whoever the caller is; a refused one throws UnsafeObjectKeyError (a 400 on the API). Checksums are computed only when required: with the SDK's default
 * (WHEN_SUPPORTED) a streamed PutObject is sent aws-chunked and s3rver stores the framing inside the object.
 */
export class Storage {
  readonly client: S3Client;
  readonly bucket: string;

  constructor(opts: StorageOptions) {
    this.bucket = opts.bucket;
    this.client = new S3Client({
      endpoint: opts.endpoint,
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket })).catch((e: { name?: string }) => {
        if (e.name !== 'BucketAlreadyOwnedByYou' && e.name !== 'BucketAlreadyExists') throw e;
      });
    }
  }

  /** Streams a body of unknown length with a multipart upload; buffers and small bodies go up in one part. */
  async put(
    key: string,
    body: Buffer | Uint8Array | Readable | string,
    contentType = 'application/octet-stream',
    signal?: AbortSignal,
  ): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: assertObjectKey(key), Body: body, ContentType: contentType },
      queueSize: 2,
      partSize: 8 * 1024 * 1024,
    });
    signal?.addEventListener('abort', () => void upload.abort(), { once: true });
    await upload.done();
  }

  async putFile(key: string, path: string, contentType?: string, signal?: AbortSignal): Promise<void> {
    await this.put(key, createReadStream(path), contentType, signal);
  }

  async getStream(
    key: string,
    range?: string,
  ): Promise<{ body: Readable; contentType?: string; contentLength?: number; contentRange?: string }> {
    const out = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: assertObjectKey(key), Range: range }),
    );
    return {
      body: out.Body as Readable,
      contentType: out.ContentType,
      contentLength: out.ContentLength,
      contentRange: out.ContentRange,
    };
  }

  async getBuffer(key: string): Promise<Buffer> {
    const { body } = await this.getStream(key);
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(Buffer.from(c as Uint8Array));
    return Buffer.concat(chunks);
  }

  async exists(key: string): Promise<boolean> {
    const head = new HeadObjectCommand({ Bucket: this.bucket, Key: assertObjectKey(key) });
    try {
      await this.client.send(head);
      return true;
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: assertObjectKey(key) }));
  }

  async presignGet(key: string, expiresInSeconds = 3600): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: assertObjectKey(key) }), {
      expiresIn: expiresInSeconds,
    });
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  close(): void {
    this.client.destroy();
  }
}
