import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../../shared/kernel/queue/define.ts';
import { queuePrefix } from '../../shared/kernel/queue/queues.ts';
import { waitUntil } from '../../support/helpers/platform.ts';
import { Cluster, type RoleProcess } from './cluster.ts';
import { expectEachOnce, figures, settle, submitJobs } from './jobs.ts';

/**
 * The fast part of the resilience suite (it runs in `npm test`): the platform in one process against a Postgres
 * and a Redis of the test's own, which the test kills and restarts under accepted work.
 */
let c: Cluster;
let platform: RoleProcess;
let key: string;
const N = Number(process.env.RESILIENCE_JOBS ?? 2);

beforeAll(async () => {
  c = await Cluster.start();
  platform = await c.spawn('api,cpu,gpu,realtime');
  key = await c.developer();
}, 180_000);
afterAll(() => c?.close());

const submitAll = () => submitJobs(c, platform.url, key, N);

async function readyz(): Promise<Record<string, string>> {
  const res = await fetch(`${platform.url}/readyz`).catch(() => null);
  return ((await res?.json().catch(() => null)) as { checks?: Record<string, string> } | null)?.checks ?? {};
}

async function failedEntries(): Promise<number> {
  const connection = new Redis(c.redis.url, { maxRetriesPerRequest: 1 });
  try {
    let n = 0;
    for (const name of QUEUES) {
      const q = new Queue(name, { connection, prefix: queuePrefix('res') });
      n += (await q.getJobCounts('failed')).failed ?? 0;
      await q.close();
    }
    return n;
  } finally {
    connection.disconnect();
  }
}

describe('resilience: dependencies lost under accepted work', () => {
  it(
    'regression: Redis killed and restarted empty lost accepted transcription and video jobs',
    { timeout: 240_000 },
    async () => {
      const { transcriptions, videos } = await submitAll();
      await c.redis.kill();
      await waitUntil(async () => (await readyz()).redis !== 'ok', 20_000);
      await c.redis.start();
      const { result, ms } = await settle(c, transcriptions, videos, 120_000);
      const o = await expectEachOnce(c, result, transcriptions, videos);
      figures('redis-killed-restarted-empty', o, c.hooks.delivered, videos, ms);
    },
  );

  it(
    'regression: a Postgres restart failed accepted video jobs with engine_unavailable',
    { timeout: 240_000 },
    async () => {
      const { transcriptions, videos } = await submitAll();
      await c.pg.stop();
      // Down until the jobs' own retries ran out: only the reconciler can bring them back.
      await waitUntil(async () => (await failedEntries()) > 0, 60_000, 200);
      await c.pg.start();
      const { result, ms } = await settle(c, transcriptions, videos, 120_000);
      expect(Object.values(result.errors)).not.toContain('engine_unavailable');
      const o = await expectEachOnce(c, result, transcriptions, videos);
      figures('postgres-restarted', o, c.hooks.delivered, videos, ms);
    },
  );
});
