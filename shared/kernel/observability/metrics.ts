import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per process. Metrics are created lazily by name so that several roles in one process share them
 * instead of registering twice.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

function once<T>(name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export const httpDuration = once(
  'http_request_duration_seconds',
  () =>
    new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
);

export const jobDuration = once(
  'job_duration_seconds',
  () =>
    new Histogram({
      name: 'job_duration_seconds',
      help: 'Job handler duration by job name and outcome',
      labelNames: ['queue', 'job', 'outcome'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900],
      registers: [registry],
    }),
);

export const jobsTotal = once(
  'jobs_total',
  () =>
    new Counter({
      name: 'jobs_total',
      help: 'Jobs finished by queue, job name and outcome',
      labelNames: ['queue', 'job', 'outcome'],
      registers: [registry],
    }),
);

export function gauge(name: string, help: string, labelNames: string[] = []): Gauge {
  return once(name, () => new Gauge({ name, help, labelNames, registers: [registry] }));
}
export function counter(name: string, help: string, labelNames: string[] = []): Counter {
  return once(name, () => new Counter({ name, help, labelNames, registers: [registry] }));
}
export function histogram(name: string, help: string, labelNames: string[] = [], buckets?: number[]): Histogram {
  return once(
    name,
    () => new Histogram({ name, help, labelNames, registers: [registry], ...(buckets ? { buckets } : {}) }),
  );
}

// --- Cluster-operations metrics (issue 9). Names are documented in k8s/README.md; dashboards, alert rules and
// KEDA triggers in k8s/ and deploy/ query them, so rename only together with those files. ---

/** GPU-seconds billed to developers, by GPU pool and job name (increment by the seconds charged). */
export const gpuSecondsBilled = once(
  'gpu_seconds_billed_total',
  () =>
    new Counter({
      name: 'gpu_seconds_billed_total',
      help: 'GPU-seconds billed by pool and job name',
      labelNames: ['pool', 'job'],
      registers: [registry],
    }),
);

/**
 * Realtime sessions open on this process, by transport (`twilio`, `direct`). KEDA scales the realtime
 * Deployment on the sum of this gauge divided by the target sessions per pod; inc() on open, dec() on close.
 */
export const activeRealtimeSessions = once(
  'realtime_active_sessions',
  () =>
    new Gauge({
      name: 'realtime_active_sessions',
      help: 'Realtime sessions currently open on this process, by transport',
      labelNames: ['transport'],
      registers: [registry],
    }),
);

/**
 * Latency of each stage of a conversational turn, in seconds: `stage` is one of `vad_endpoint` (end of speech →
 * turn detected), `stt_final` (turn detected → final transcript), `llm_first_token`, `tts_first_audio`, and
 * `turn_total` (end of the caller's speech → first agent audio sent).
 */
export const turnStageLatency = once(
  'turn_stage_latency_seconds',
  () =>
    new Histogram({
      name: 'turn_stage_latency_seconds',
      help: 'Per-stage latency of a realtime conversational turn',
      labelNames: ['stage'],
      buckets: [0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
      registers: [registry],
    }),
);

/**
 * Webhook delivery attempts by outcome: `delivered` (2xx), `retrying` (failed, another attempt is scheduled),
 * `failed` (gave up after the last attempt), `rejected` (refused before sending, e.g. the SSRF policy).
 */
export const webhookDeliveries = once(
  'webhook_deliveries_total',
  () =>
    new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
);

/** A source of the age of the oldest job still waiting on each queue (see trackQueueBacklogAge). */
export type QueueBacklogSource = () => Promise<Array<{ queue: string; ageSeconds: number }>>;
const backlogSources = new Set<QueueBacklogSource>();

/**
 * Age in seconds of the oldest job waiting on each queue, computed at scrape time from the registered sources;
 * 0 when the queue is empty. The "queue backlog age" alert reads it. Registered here; nothing sets it directly.
 */
once(
  'queue_oldest_waiting_job_age_seconds',
  () =>
    new Gauge({
      name: 'queue_oldest_waiting_job_age_seconds',
      help: 'Age of the oldest job waiting on each queue',
      labelNames: ['queue'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const source of backlogSources) {
          const ages = await source().catch(() => []);
          for (const { queue, ageSeconds } of ages) this.set({ queue }, ageSeconds);
        }
      },
    }),
);

/** The part of a BullMQ Queue that trackQueueBacklogAge reads. */
export interface BacklogQueue {
  name: string;
  getJobs(
    types: Array<'wait' | 'prioritized'>,
    start?: number,
    end?: number,
    asc?: boolean,
  ): Promise<Array<{ timestamp: number }>>;
}

/**
 * Registers queues whose oldest waiting job age queue_oldest_waiting_job_age_seconds reports. The oldest job of
 * the wait list (FIFO) is read, and the first few prioritized ones (ordered by priority, not age). Returns an
 * unregister function. Call once per process, e.g. `trackQueueBacklogAge(() => infra.queues.all())`.
 */
export function trackQueueBacklogAge(queues: () => BacklogQueue[]): () => void {
  const source: QueueBacklogSource = async () => {
    const now = Date.now();
    return Promise.all(
      queues().map(async (q) => {
        const [waiting, prioritized] = await Promise.all([
          q.getJobs(['wait'], 0, 0, true),
          q.getJobs(['prioritized'], 0, 19, true),
        ]);
        const oldest = Math.min(...[...waiting, ...prioritized].map((j) => j.timestamp).filter(Boolean), now);
        return { queue: q.name, ageSeconds: Math.max(0, (now - oldest) / 1000) };
      }),
    );
  };
  backlogSources.add(source);
  return () => backlogSources.delete(source);
}

/**
 * Admission control (docs/admission.md): this realtime process's call capacity, its headroom (capacity minus the
 * sessions it runs; KEDA scales the realtime Deployment on the fleet's used share), and calls refused for capacity.
 */
export const realtimeCapacity = gauge('realtime_capacity_sessions', 'Concurrent calls this realtime process accepts');
export const realtimeHeadroom = gauge(
  'realtime_headroom_sessions',
  'Calls this realtime process can still accept (capacity minus sessions running)',
);
export const admissionRefused = counter(
  'realtime_admission_refused_total',
  'New calls refused because the realtime fleet was at capacity, by transport',
  ['transport'],
);
