import { createServer, type Server } from 'node:http';
import { mkdir, readdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { refuseUnsafePaths } from './embedded-s3-paths.ts';
import { guardStoreWrites } from './embedded-s3-store.ts';

export interface EmbeddedS3 {
  endpoint: string;
  /** True while this process serves the port (it started the server, or took it over). */
  readonly owned: boolean;
  close(): Promise<void>;
}

/** How often a process using another's server checks that it is still there, to take the port over if not. */
const TAKE_OVER_MS = 1000;

function listen(server: Server, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const fail = (e: Error) => reject(e);
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', fail);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Whether the server on `port` is an embedded S3 of this install: it answers S3's ListBuckets, and the buckets it
 * lists are the folders in `dir` (s3rver keeps a bucket as a folder). Anything else on the port is a
 * misconfiguration to report, not a server to write to.
 */
async function servesOurFolder(port: number, dir: string): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3000) });
    const xml = await res.text();
    if (!res.ok || !xml.includes('<ListAllMyBucketsResult')) return false;
    const listed = [...xml.matchAll(/<Name>([^<]*)<\/Name>/g)].map((m) => m[1]).sort();
    const folders = (await readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    return JSON.stringify(listed) === JSON.stringify(folders);
  } catch {
    return false;
  }
}

/**
 * Starts s3rver on loopback with data under `dir`. Roles started apart on one machine share one server: the first
 * binds the port; a later one finds it in use, checks that it serves this folder, and uses it. Every user keeps
 * trying the port once a second, so when the owner stops (a restart, a crash) another takes over within about a
 * second and the S3 outlives any one role. Port 0 (tests) never shares.
 */
export async function startEmbeddedS3(dir: string, port: number): Promise<EmbeddedS3> {
  await mkdir(dir, { recursive: true });
  const s3 = new S3rver({ address: '127.0.0.1', port, directory: dir, silent: true });
  guardStoreWrites(s3.store);
  const handler = refuseUnsafePaths(s3.callback());
  let server: Server | null = createServer(handler);
  let owned = false;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let boundPort = port;
  try {
    boundPort = (await listen(server, port)).port;
    owned = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0) throw e;
    server = null;
    if (!(await servesOurFolder(port, dir))) {
      throw new Error(
        `S3_EMBEDDED_PORT ${port} is in use by something other than this install's embedded S3 (${dir}); ` +
          'set another port, or S3_ENDPOINT for an external S3.',
      );
    }
    // Take the port over when its owner goes away; a failed bind means someone (the owner or another user) has it.
    const tryTakeOver = async () => {
      const candidate = createServer(handler);
      try {
        await listen(candidate, port);
      } catch {
        return;
      }
      if (closed) return void candidate.close();
      server = candidate;
      owned = true;
      if (timer) clearInterval(timer);
    };
    timer = setInterval(() => void tryTakeOver(), TAKE_OVER_MS).unref();
  }
  let closing: Promise<void> | null = null;
  return {
    endpoint: `http://127.0.0.1:${boundPort}`,
    get owned() {
      return owned;
    },
    close: () =>
      (closing ??= (async () => {
        closed = true;
        if (timer) clearInterval(timer);
        const s = server;
        if (!s) return;
        await new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        });
      })()),
  };
}
