import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from './db.ts';

/**
 * The real entry point, `scripts/start.ts <roles>`, as a process of its own on a throwaway database, Redis prefix,
 * embedded S3 folder and port; `env` adds to (or overrides) that. Its stdout's JSON log lines are collected as they
 * come, and its stderr kept. The caller kills it, drops the database and removes the folder.
 */
export async function startScript(roles: string, env: Record<string, string> = {}) {
  const database = await createTestDatabase();
  const s3dir = await mkdtemp(join(tmpdir(), 'vap-s3-'));
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', roles], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      REDIS_PREFIX: prefix,
      S3_EMBEDDED_DIR: s3dir,
      S3_EMBEDDED_PORT: '0',
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '10000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop()!;
    for (const l of parts) if (l.startsWith('{')) lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { database, s3dir, prefix, port, child, lines, stderr: () => stderr, exited };
}
