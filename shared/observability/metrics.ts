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
