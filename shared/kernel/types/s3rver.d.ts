// s3rver ships no type declarations; this is the part of its API the platform uses.
declare module 's3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  import type { AddressInfo } from 'node:net';
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    configureBuckets?: { name: string }[];
  }
  /** The folder store (lib/stores/filesystem.js); its writes are replaced by shared/kernel/storage/embedded-s3-store.ts. */
  export interface S3rverStore {
    rootDirectory: string;
    getResourcePath(bucket: string, key: string | undefined, resource: string): string;
    putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5?: string): Promise<void>;
    putObject(object: {
      bucket: string;
      key: string;
      content: Buffer | NodeJS.ReadableStream;
      metadata: Record<string, string>;
    }): Promise<{ size: number; md5: string }>;
    putPart(
      bucket: string,
      uploadId: string,
      partNumber: number,
      content: NodeJS.ReadableStream,
    ): Promise<{ size: number; md5: string }>;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    store: S3rverStore;
    context: { store: S3rverStore };
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    /** The Koa request handler. */
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
