import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  activeRealtimeSessions,
  gpuSecondsBilled,
  registry,
  trackQueueBacklogAge,
  turnStageLatency,
  webhookDeliveries,
} from '../../shared/kernel/observability/metrics.ts';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const prefix = `tops${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

describe('operations metrics', () => {
  it('exports the metrics the dashboard, alerts and KEDA triggers query', async () => {
    // The registry is the process's: files run before this one in the same test process counted into it.
    for (const m of [gpuSecondsBilled, activeRealtimeSessions, turnStageLatency, webhookDeliveries]) m.reset();
    gpuSecondsBilled.inc({ pool: 'avatar', job: 'video.avatar' }, 12.5);
    activeRealtimeSessions.inc({ transport: 'twilio' });
    turnStageLatency.observe({ stage: 'turn_total' }, 0.42);
    webhookDeliveries.inc({ outcome: 'delivered' });
    const text = await registry.metrics();
    expect(text).toContain('gpu_seconds_billed_total{pool="avatar",job="video.avatar"} 12.5');
    expect(text).toMatch(/realtime_active_sessions\{transport="twilio"\} 1/);
    expect(text).toContain('turn_stage_latency_seconds_bucket{le="0.5",stage="turn_total"} 1');
    expect(text).toContain('webhook_deliveries_total{outcome="delivered"} 1');
  });

  it('reports the age of the oldest waiting job, prioritized jobs included', async () => {
    const plain = new Queue('ops-plain', { connection: redis, prefix });
    const prio = new Queue('ops-prio', { connection: redis, prefix });
    const empty = new Queue('ops-empty', { connection: redis, prefix });
    const now = Date.now();
    await plain.add('a', {}, { timestamp: now - 90_000 });
    await plain.add('b', {}, { timestamp: now - 5_000 });
    await prio.add('c', {}, { priority: 1, timestamp: now - 1_000 });
    await prio.add('d', {}, { priority: 5, timestamp: now - 300_000 });
    const stop = trackQueueBacklogAge(() => [plain, prio, empty]);
    try {
      const m = await registry.getSingleMetric('queue_oldest_waiting_job_age_seconds')!.get();
      const age = (q: string) => m.values.find((v) => v.labels.queue === q)?.value ?? NaN;
      expect(age('ops-plain')).toBeGreaterThanOrEqual(90);
      expect(age('ops-plain')).toBeLessThan(120);
      expect(age('ops-prio')).toBeGreaterThanOrEqual(300);
      expect(age('ops-empty')).toBeLessThan(1);
    } finally {
      stop();
      await Promise.all([plain.close(), prio.close(), empty.close()]);
    }
  });
});
