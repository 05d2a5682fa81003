import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';

export interface EmbeddedS3 {
  endpoint: string;
  /** True when this process started the server (and so must close it). */
  owned: boolean;
  close(): Promise<void>;
}

/**
 * Starts s3rver on loopback with data under `dir`. When the port is taken by another role of the same install
 * (each role started alone on one machine), that server is used instead: both read the same folder anyway.
 */
export async function startEmbeddedS3(dir: string, port: number): Promise<EmbeddedS3> {
  await mkdir(dir, { recursive: true });
  const server = new S3rver({ address: '127.0.0.1', port, directory: dir, silent: true });
  try {
    const addr = (await server.run()) as AddressInfo;
    let closing: Promise<void> | null = null;
    return {
      endpoint: `http://127.0.0.1:${addr.port}`,
      owned: true,
      close: () => (closing ??= server.close()),
    };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0) throw e;
    return { endpoint: `http://127.0.0.1:${port}`, owned: false, close: async () => {} };
  }
}
