import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { TestRun, TestRunDetail } from '../../shared/kernel/contracts/agent-tests.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import { createDb } from '../../shared/kernel/db/pool.ts';
import { queuePrefix } from '../../shared/kernel/queue/queues.ts';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { createTestDatabase } from '../../support/helpers/db.ts';
import { waitUntil } from '../../support/helpers/platform.ts';
import { FRONT_DESK_SUITE } from '../agent-tests/fixtures.ts';

/** A process's niceness: field 19 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
async function niceOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Issue #35: in the one-process mode (`scripts/start.ts all`), agent test runs and call replays (queue cpu-tests)
 * run developers' scenarios in a process of their own at niceness 10, not on the event loop of the live calls.
 */
describe('the test pool process of the one-process mode', () => {
  it('consumes cpu-tests in a separate niced process, plays a run end to end, and stops with the platform', async () => {
    const database = await createTestDatabase();
    const s3dir = await mkdtemp(join(tmpdir(), 'vap-s3-'));
    const prefix = `t${randomBytes(4).toString('hex')}`;
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', 'all'], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        REDIS_PREFIX: prefix,
        S3_EMBEDDED_DIR: s3dir,
        S3_EMBEDDED_PORT: '0',
        LOG_LEVEL: 'info',
        SHUTDOWN_GRACE_MS: '10000',
        PUBLIC_BASE_URL: 'https://voice.example.com',
        AGENT_TESTS_MAX_PARALLEL: '1',
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
    const db = createDb(database.url, 1);
    const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
    const queue = new Queue('cpu-tests', { connection: redis, prefix: queuePrefix(prefix) });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitUntil(async () => (await fetch(`${base}/healthz`).catch(() => null))?.ok, 60_000, 100);
      // The primary logs the child it forked; the child itself logs that it runs the tests role (and only it).
      const forked = await waitUntil(() => lines.find((l) => l.msg === 'test pool process started'), 60_000, 100);
      const testsPid = forked.testsPid as number;
      expect(testsPid).not.toBe(child.pid);
      await waitUntil(
        () => lines.find((l) => l.msg === 'platform started' && String(l.roles) === 'tests'),
        60_000,
        100,
      );
      expect(await niceOf(testsPid)).toBe(10);
      expect(await niceOf(child.pid!)).toBe(0);

      const dev = await insertDeveloper(db, 'tests-process', 'pro');
      const { key } = await mintKey(db, dev.id, 'Default');
      const call = (path: string, init: { method?: string; json?: unknown } = {}) =>
        fetch(`${base}${path}`, {
          method: init.method ?? 'GET',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: init.json === undefined ? undefined : JSON.stringify(init.json),
        });
      const agent = (await (
        await call('/v1/agents', {
          method: 'POST',
          json: {
            name: 'Front desk',
            systemPrompt: 'You answer the phone for a dental practice.',
            firstMessage: 'Hello, thanks for calling.',
          },
        })
      ).json()) as { id: string };
      const created = await call(`/v1/agents/${agent.id}/tests`, {
        method: 'POST',
        json: { scenarios: FRONT_DESK_SUITE },
      });
      expect(created.status).toBe(202);
      const run = (await created.json()) as TestRun;
      const detail = await waitUntil(
        async () => {
          const d = (await (await call(`/v1/agent-tests/runs/${run.id}`)).json()) as TestRunDetail;
          return ['passed', 'failed', 'error'].includes(d.status) ? d : null;
        },
        240_000,
        250,
      );
      // The suite's second scenario fails on purpose (its agent says "price"): both were played.
      const why = JSON.stringify(detail.results.map((r) => r.checks.filter((c) => !c.passed)));
      expect(detail, why).toMatchObject({ status: 'failed', progress: { done: 2, total: 2 }, passed: 1, failed: 1 });
      // And the job was processed by the test pool process, not by the process that serves the API and live calls.
      const job = await queue.getJob(run.id);
      expect(job?.processedBy?.split(':').at(-1)).toBe(String(testsPid));

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // No orphan: the test pool process stopped with the platform.
      expect(alive(testsPid)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await queue.close();
      redis.disconnect();
      await db.end();
      await database.drop();
      await rm(s3dir, { recursive: true, force: true });
    }
    expect(stderr).not.toMatch(/Error/);
  }, 360_000);
});
