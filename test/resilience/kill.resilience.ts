import { afterEach, describe, it } from 'vitest';
import { waitUntil } from '../../support/helpers/platform.ts';
import { Cluster, type RoleProcess } from './cluster.ts';
import { expectEachOnce, figures, settle, submitJobs } from './jobs.ts';

/**
 * The slow part of the resilience suite (`npm run test:resilience`): platform processes SIGKILLed in the middle
 * of jobs, with each role in its own process as a cluster runs them.
 */
const N = Number(process.env.RESILIENCE_JOBS ?? 3);
let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

/** Until a transcription holds its credits (decoded, the engine running): the moment a crash charged twice. */
async function transcriptionRunning(cl: Cluster): Promise<boolean> {
  const { rows } = await cl.db.query(
    `select 1 from credit_ledger where hold_key like 'transcription:%' and status = 'reserved' limit 1`,
  );
  return rows.length > 0;
}

async function videoRunning(cl: Cluster): Promise<boolean> {
  const { rows } = await cl.db.query(`select 1 from video_jobs where status = 'processing' limit 1`);
  return rows.length > 0;
}

describe('resilience: processes killed mid-job', () => {
  it(
    'regression: a worker SIGKILLed mid-transcription left its hold reserved and the retry charged again',
    {
      timeout: 400_000,
    },
    async () => {
      c = await Cluster.start();
      const api = await c.spawn('api');
      const key = await c.developer();
      const worker: RoleProcess = await c.spawn('cpu,gpu');
      const { transcriptions, videos } = await submitJobs(c, api.url, key, N);
      await waitUntil(() => transcriptionRunning(c!), 120_000, 20);
      await c.kill(worker);
      const killedAt = Date.now();
      await c.spawn('cpu,gpu');
      const { result } = await settle(c, transcriptions, videos, 240_000);
      const o = await expectEachOnce(c, result, transcriptions, videos);
      figures('worker-sigkilled-mid-job', o, c.hooks.delivered, videos, Date.now() - killedAt);
    },
  );

  it(
    'each role in its own process (api, cpu, gpu, realtime); the gpu and cpu workers SIGKILLed mid-job',
    {
      timeout: 500_000,
    },
    async () => {
      c = await Cluster.start();
      const api = await c.spawn('api');
      await c.spawn('realtime');
      const gpu = await c.spawn('gpu');
      const cpu = await c.spawn('cpu');
      const key = await c.developer();
      const { transcriptions, videos } = await submitJobs(c, api.url, key, N);
      await waitUntil(() => videoRunning(c!), 120_000, 20);
      await c.kill(gpu);
      await c.spawn('gpu');
      await waitUntil(() => transcriptionRunning(c!), 120_000, 20);
      await c.kill(cpu);
      const killedAt = Date.now();
      await c.spawn('cpu');
      const { result } = await settle(c, transcriptions, videos, 300_000);
      const o = await expectEachOnce(c, result, transcriptions, videos);
      figures('roles-apart-sigkilled', o, c.hooks.delivered, videos, Date.now() - killedAt);
    },
  );
});
