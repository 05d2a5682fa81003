import { UnrecoverableError, Worker } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoJob } from '../../shared/contracts/video.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { startPlatform, type Platform } from '../../scripts/platform.ts';
import { queuePrefix } from '../../shared/kernel/queue/queues.ts';
import { reconcileVideoJobs } from '../../shared/domains/video/reconciler.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { TEST_ENV, waitForJob } from './helpers.ts';
import { startReceiver, type LocalServer, type Received } from '../../support/doubles/media-server.ts';

let p: TestPlatform;
let dev: { developerId: string; apiKey: string };
const servers: LocalServer[] = [];

beforeAll(async () => {
  // API only: this file drives the workers itself (the reconciler test needs jobs to stay queued).
  p = await startTestPlatform({ roles: ['api'], env: { ...TEST_ENV, RECONCILE_AFTER_MS: '0' } });
  dev = await p.developer('pro');
});
afterAll(async () => {
  await workers?.stop();
  await p?.close();
  await Promise.all(servers.map((s) => s.close()));
});

let workers: Platform | null = null;
async function startWorkers(): Promise<void> {
  workers ??= await startPlatform(
    { ...p.config, PORT: 0, S3_ENDPOINT: p.infra.embeddedS3!.endpoint },
    createLogger('silent'),
    ['cpu', 'gpu'],
  );
}

async function receiver(failFirst: number, status = 500): Promise<LocalServer & { received: Received[] }> {
  const r = await startReceiver(failFirst, status);
  servers.push(r);
  return r;
}

async function generate(webhook_url: string): Promise<VideoJob> {
  const res = await p.request('/v1/video/generate', {
    method: 'POST',
    key: dev.apiKey,
    json: { prompt: 'Webhook test', duration_seconds: 1, width: 256, height: 256, fps: 8, webhook_url },
  });
  expect(res.status).toBe(202);
  return (await res.json()) as VideoJob;
}

describe('reconciler', () => {
  it('re-enqueues an accepted job whose queue entry Redis lost, idempotently', async () => {
    const job = await generate(`http://127.0.0.1:9/never`);
    // Simulate a Redis loss: the queue entry disappears, the Postgres row (pending) stays.
    const q = p.infra.queues.get('gpu-generate');
    await q.remove(job.id);
    expect(await q.getJobState(job.id)).toBe('unknown');
    expect((await reconcileVideoJobs(p.infra)).requeued).toBeGreaterThanOrEqual(1);
    expect(await q.getJobState(job.id)).toBe('waiting');
    // A second pass finds the entry and adds nothing.
    const again = await reconcileVideoJobs(p.infra);
    expect(again.requeued).toBe(0);
    expect(await q.getJobs(['waiting'])).toHaveLength(1);
  });
});

describe('reconciler and dead flows', () => {
  it('fails a dub job whose flow step failed for good instead of leaving it processing forever', async () => {
    const res = await p.request('/v1/video/dub', {
      method: 'POST',
      key: dev.apiKey,
      json: { video_url: 'http://127.0.0.1:9/clip.mp4', target_language: 'es' },
    });
    const job = (await res.json()) as VideoJob;
    expect(res.status).toBe(202);
    // A CPU worker that dies on every job for good: what BullMQ's stalled check does after repeated crashes.
    const connection = p.infra.bullRedis.duplicate();
    const dying = new Worker(
      'cpu',
      async () => {
        throw new UnrecoverableError('worker crashed repeatedly');
      },
      { connection, prefix: queuePrefix(p.config.REDIS_PREFIX) },
    );
    const q = p.infra.queues.get('cpu');
    await waitUntil(async () => (await q.getJobState(`${job.id}-transcribe`)) === 'failed');
    await dying.close();
    connection.disconnect();
    expect(await q.getJobState(`${job.id}-mux`)).toBe('waiting-children');
    expect((await reconcileVideoJobs(p.infra)).failed).toBeGreaterThanOrEqual(1);
    const after = (await (await p.request(`/v1/video/${job.id}`, { key: dev.apiKey })).json()) as VideoJob;
    expect(after.status).toBe('failed');
    expect(after.error?.code).toBe('engine_unavailable');
  });
});

describe('webhook delivery', () => {
  it('retries a failing receiver on the Standard Webhooks schedule, logging every attempt, same webhook-id', async () => {
    const hook = await receiver(3);
    const url = `${hook.url}/retry`;
    await startWorkers();
    const job = await generate(url);
    await waitForJob(p, dev.apiKey, job.id);
    await waitUntil(() => hook.received.some((r) => r.status === 200), 30_000);
    expect(hook.received.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    // The receiver answers before the worker records the attempt: the log is read once the message is delivered.
    await waitUntil(async () => {
      const { rows } = await p.infra.db.query('select 1 from webhook_messages where source = $1 and status = $2', [
        `video_job:${job.id}`,
        'delivered',
      ]);
      return rows.length > 0;
    });
    const ids = new Set(hook.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const secret = (
      (await (await p.request(`/v1/webhooks/secret?url=${encodeURIComponent(url)}`, { key: dev.apiKey })).json()) as {
        secret: string;
      }
    ).secret;
    for (const r of hook.received)
      expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    const { rows } = await p.infra.db.query<{ attempt: number; status_code: number }>(
      `select d.attempt, d.status_code from webhook_deliveries d join webhook_messages m on m.id = d.message_id
       where m.source = $1 order by d.attempt`,
      [`video_job:${job.id}`],
    );
    expect(rows).toEqual([
      { attempt: 1, status_code: 500 },
      { attempt: 2, status_code: 500 },
      { attempt: 3, status_code: 500 },
      { attempt: 4, status_code: 200 },
    ]);
    const { rows: msg } = await p.infra.db.query('select status, attempts from webhook_messages where source = $1', [
      `video_job:${job.id}`,
    ]);
    expect(msg[0]).toMatchObject({ status: 'delivered', attempts: 4 });
  });

  it('stops at 410 Gone and disables the endpoint', async () => {
    const hook = await receiver(100, 410);
    const url = `${hook.url}/gone`;
    await startWorkers();
    const job = await generate(url);
    await waitForJob(p, dev.apiKey, job.id);
    await waitUntil(async () => {
      const { rows } = await p.infra.db.query('select status from webhook_messages where source = $1', [
        `video_job:${job.id}`,
      ]);
      return rows[0]?.status === 'failed';
    });
    expect(hook.received).toHaveLength(1);
    const secret = await (
      await p.request(`/v1/webhooks/secret?url=${encodeURIComponent(url)}`, { key: dev.apiKey })
    ).json();
    expect(secret).toMatchObject({ disabled: true });
  });
});
