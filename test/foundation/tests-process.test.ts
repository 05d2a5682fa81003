import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { TestRun, TestRunDetail } from '../../shared/contracts/agent-tests.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import { createDb } from '../../shared/kernel/db/pool.ts';
import { queuePrefix } from '../../shared/kernel/queue/queues.ts';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { sessionGroupNice } from '../../shared/kernel/process/session-priority.ts';
import { allowedCpus, resolveBatchCpus } from '../../shared/kernel/process/cpu-affinity.ts';
import { waitUntil } from '../../support/helpers/platform.ts';
import { startScript } from '../../support/helpers/start-script.ts';
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
const STARTED_ENV = { LOG_LEVEL: 'info', PUBLIC_BASE_URL: 'https://voice.example.com', AGENT_TESTS_MAX_PARALLEL: '1' };

describe('the test pool process of the one-process mode', () => {
  it('consumes cpu-tests in a separate niced process, plays a run end to end, and stops with the platform', async () => {
    const { database, s3dir, prefix, port, child, lines, stderr, exited } = await startScript('all', STARTED_ENV);
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
      // On the batch work's cpus (SPEECH_LOCAL_BATCH_CPUS: every cpu but one, where two or more are allowed), the
      // platform on all of them.
      const batch = resolveBatchCpus('').pinning;
      const cpusOf = async (pid: number) => allowedCpus(await readFile(`/proc/${pid}/status`, 'utf8'));
      expect(await cpusOf(testsPid)).toEqual(batch ? batch.cpus : allowedCpus());
      expect(await cpusOf(child.pid!)).toEqual(allowedCpus());
      // Where the kernel groups sessions (autogroup), its session's group is niced too once it is up; ours is not.
      if (sessionGroupNice(child.pid!) !== null) {
        await waitUntil(() => sessionGroupNice(testsPid) === 10, 10_000, 100);
        expect(sessionGroupNice(child.pid!)).toBe(0);
      }

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
      const why = JSON.stringify(
        detail.results.map((r) => ({
          failed: r?.checks.filter((c) => !c.passed),
          error: r?.error,
          rootCause: r?.rootCause,
          transcript: r?.transcript,
        })),
      );
      expect(detail, why).toMatchObject({ status: 'failed', progress: { done: 2, total: 2 }, passed: 1, failed: 1 });
      // And the job was processed by the test pool process, not by the process that serves the API and live calls.
      const job = await queue.getJob(run.id);
      expect(job?.processedBy?.split(':').at(-1)).toBe(String(testsPid));

      // A test pool process that dies is replaced, niced like the first.
      process.kill(testsPid, 'SIGKILL');
      const replaced = await waitUntil(
        () => lines.filter((l) => l.msg === 'test pool process started').at(1),
        60_000,
        100,
      );
      const replacementPid = replaced.testsPid as number;
      expect(replacementPid).not.toBe(testsPid);
      expect(await niceOf(replacementPid)).toBe(10);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // No orphan: the test pool process stopped with the platform.
      expect(alive(replacementPid)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await queue.close();
      redis.disconnect();
      await db.end();
      await database.drop();
      await rm(s3dir, { recursive: true, force: true });
    }
    expect(stderr()).not.toMatch(/Error/);
  }, 360_000);

  it('with PROCESSES=2 is forked once, by the primary, and stops with it', async () => {
    const { database, s3dir, port, child, lines, exited } = await startScript('all', {
      ...STARTED_ENV,
      PROCESSES: '2',
      REALTIME_SESSION_SECRET: randomBytes(32).toString('base64url'),
    });
    try {
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, 60_000, 100);
      // Each copy forks right after it logs that it started, if it forks at all: once both have, count the forks.
      const started = (roles: string) => lines.filter((l) => l.msg === 'platform started' && String(l.roles) === roles);
      await waitUntil(() => started('api,cpu,gpu,realtime').length === 2 && started('tests').length === 1, 60_000, 100);
      const forks = lines.filter((l) => l.msg === 'test pool process started');
      expect(forks).toHaveLength(1);
      expect(forks[0]!.roles).toBe('primary');
      const testsPid = forks[0]!.testsPid as number;
      expect(await niceOf(testsPid)).toBe(10);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(alive(testsPid)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await database.drop();
      await rm(s3dir, { recursive: true, force: true });
    }
  }, 180_000);
});
