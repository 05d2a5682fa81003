import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../shared/kernel/storage/s3.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { freePort } from './services.ts';

/**
 * Issue #24 finding 5: roles started apart on one machine are documented to share the embedded S3, but the second
 * died at boot with EADDRINUSE; and a full disk under S3_EMBEDDED_DIR crashed the whole process on ENOSPC.
 */
const ROOT = new URL('../../', import.meta.url).pathname;

interface Role {
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

function startRole(dir: string, port: number): Role {
  const child = spawn(
    process.execPath,
    ['--no-deprecation', '--import', 'tsx', 'test/resilience/embedded-s3-role.ts', dir, String(port)],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: Array<Record<string, unknown>> = [];
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, lines, exited };
}

async function ready(role: Role): Promise<boolean> {
  const line = await waitUntil(() => {
    if (role.child.exitCode !== null) throw new Error(`the role exited at start (${role.child.exitCode})`);
    return role.lines.find((l) => l.ready);
  }, 60_000);
  return line.owned as boolean;
}

async function kill(role: Role): Promise<void> {
  if (role.child.exitCode !== null) return;
  role.child.kill('SIGKILL');
  await role.exited;
}

describe('roles started apart on one machine share one embedded S3', () => {
  let dir: string;
  const roles: Role[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vap-shared-s3-'));
  });
  afterAll(async () => {
    await Promise.all(roles.map(kill));
    await rm(dir, { recursive: true, force: true });
  });

  it('the first starts it, the others use it, and it survives the restart of any one', async () => {
    const port = await freePort();
    const storage = new Storage({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      bucket: 'vap',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    });
    const api = startRole(dir, port);
    roles.push(api);
    expect(await ready(api)).toBe(true);
    await storage.ensureBucket();
    await storage.put('dev/a.txt', 'written while the api owned it');

    const cpu = startRole(dir, port);
    roles.push(cpu);
    expect(await ready(cpu)).toBe(false);
    const realtime = startRole(dir, port);
    roles.push(realtime);
    expect(await ready(realtime)).toBe(false);
    expect((await storage.getBuffer('dev/a.txt')).toString()).toBe('written while the api owned it');

    // The owner dies (a crash, or a restart): one of the others takes the port over.
    await kill(api);
    await waitUntil(() => [cpu, realtime].some((r) => r.lines.some((l) => l.tookOver)), 20_000);
    expect([cpu, realtime].filter((r) => r.lines.some((l) => l.tookOver))).toHaveLength(1);
    expect((await storage.getBuffer('dev/a.txt')).toString()).toBe('written while the api owned it');
    await storage.put('dev/b.txt', 'written after the take-over');

    // The api comes back and uses the server that is there; nobody died along the way.
    const again = startRole(dir, port);
    roles.push(again);
    expect(await ready(again)).toBe(false);
    expect((await storage.getBuffer('dev/b.txt')).toString()).toBe('written after the take-over');
    expect([cpu, realtime, again].map((r) => r.child.exitCode)).toEqual([null, null, null]);
    storage.close();
  });
});

/** A 16 kHz mono 16-bit WAV of `seconds` of a quiet tone. */
function wav(seconds: number): Buffer {
  const n = Math.round(seconds * 16000);
  const b = Buffer.alloc(44 + n * 2);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + n * 2, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(16000, 24);
  b.writeUInt32LE(32000, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(800 * Math.sin((2 * Math.PI * 440 * i) / 16000)), 44 + i * 2);
  return b;
}

function mountTmpfs(dir: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// A real full disk: a 1 MiB tmpfs under S3_EMBEDDED_DIR (needs root to mount; skipped where it cannot be made).
const mnt = await mkdtemp(join(tmpdir(), 'vap-full-'));
const mounted = mountTmpfs(mnt, '1m');

describe.skipIf(!mounted)('a full disk under S3_EMBEDDED_DIR', () => {
  let p: TestPlatform;
  let key: string;
  beforeAll(async () => {
    p = await startTestPlatform({ roles: ['api', 'cpu'], env: { S3_EMBEDDED_DIR: join(mnt, 's3') } });
    key = (await p.developer('pro')).apiKey;
  });
  afterAll(async () => {
    await p?.close();
    execFileSync('umount', [mnt]);
    await rm(mnt, { recursive: true, force: true });
  });

  const upload = (audio: Buffer) => {
    const form = new FormData();
    form.set('file', new Blob([audio], { type: 'audio/wav' }), 'a.wav');
    return p.request('/v1/transcribe/async', { method: 'POST', key, body: form });
  };

  it('fails only the request that needed the space (507 in the envelope); the process and later writes go on', async () => {
    const big = await upload(wav(60)); // 1.9 MB into 1 MiB
    const text = await big.text();
    expect({ status: big.status, text }).toMatchObject({ status: 507 });
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'storage_full', requestId: expect.any(String) } });

    expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
    expect((await p.request('/v1/me', { key })).status).toBe(200);
    const small = await upload(wav(1));
    expect(small.status).toBe(202);
    // Nothing of the refused upload is left taking the space.
    expect(execFileSync('du', ['-sk', mnt]).toString().split('\t')[0]).toMatch(/^\d+$/);
    expect(Number(execFileSync('du', ['-sk', mnt]).toString().split('\t')[0])).toBeLessThan(512);
  });
});

if (!mounted) await rm(mnt, { recursive: true, force: true });
