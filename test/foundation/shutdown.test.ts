import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import { createDb } from '../../shared/kernel/db/pool.ts';
import { createRedis } from '../../shared/kernel/redis.ts';
import { createTestDatabase } from '../../support/helpers/db.ts';
import { waitUntil } from '../../support/helpers/platform.ts';
import { startScript } from '../../support/helpers/start-script.ts';

describe('graceful shutdown', () => {
  it('on SIGTERM stops accepting, finishes the in-flight request, and exits 0', async () => {
    const { database, s3dir, port, child, stderr, exited } = await startScript('api,cpu', {
      // The api runs without the realtime role, so (like any deployment of it) it needs the shared secret.
      REALTIME_SESSION_SECRET: randomBytes(32).toString('base64url'),
    });
    const db = createDb(database.url, 1);
    const redis = createRedis('redis://127.0.0.1:6379', 'test');
    try {
      const base = `http://127.0.0.1:${port}`;
      // The script loads the platform under tsx: 32 s at load 9 (the file alone beside two helpers' tests).
      await waitUntil(async () => (await fetch(`${base}/healthz`).catch(() => null))?.ok, 90_000, 100);
      const dev = await insertDeveloper(db, 'shutdown', 'starter');
      const { key } = await mintKey(db, dev.id, 'Default');

      // A request whose body is still arriving when SIGTERM lands.
      const body = JSON.stringify({ name: 'in-flight' });
      const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${base}/v1/keys`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'content-length': body.length,
          },
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.write(body.slice(0, 5));
        (globalThis as { finishBody?: () => void }).finishBody = () => req.end(body.slice(5));
      });
      await waitUntil(async () => {
        const r = await db.query('select 1 from api_keys where developer_id = $1 and last_used_at is null', [dev.id]);
        return r.rowCount === 1;
      });

      child.kill('SIGTERM');
      // New connections are refused once draining begins.
      await waitUntil(async () => (await fetch(`${base}/healthz`).catch(() => null)) === null, 10_000, 50);
      (globalThis as { finishBody?: () => void }).finishBody!();
      const res = await response;
      expect(res.status, res.body).toBe(201);
      expect(JSON.parse(res.body).name).toBe('in-flight');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await db.end();
      redis.disconnect();
      await database.drop();
      await rm(s3dir, { recursive: true, force: true });
    }
    expect(stderr()).not.toMatch(/Error/);
  }, 120_000);

  it('with PROCESSES=2 runs two copies on one port and drains both on SIGTERM', async () => {
    const database = await createTestDatabase();
    const s3dir = await mkdtemp(join(tmpdir(), 'vap-s3-'));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', 'api'], {
      env: {
        ...process.env,
        PROCESSES: '2',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        REDIS_PREFIX: `t${randomBytes(4).toString('hex')}`,
        S3_EMBEDDED_DIR: s3dir,
        S3_EMBEDDED_PORT: '0',
        LOG_LEVEL: 'warn',
        // Two copies cannot share an invented secret: PROCESSES > 1 needs it set.
        REALTIME_SESSION_SECRET: randomBytes(32).toString('base64url'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      // The primary and its two copies each load the platform under tsx: past 30 s in a whole run at load 8.
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, 90_000, 100);
      // Both copies are up (the primary forks them) and serve the shared port.
      const copies = await waitUntil(() => {
        const out = execFileSync('pgrep', ['-P', String(child.pid)])
          .toString()
          .trim()
          .split('\n');
        return out.length === 2 ? out : null;
      });
      expect(copies).toHaveLength(2);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      for (const pid of copies) expect(() => process.kill(Number(pid), 0)).toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await database.drop();
      await rm(s3dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses to start on a bad configuration value, naming it', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', 'api'], {
      env: { ...process.env, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(78);
    expect(stderr).toContain('PORT');
  });
});
