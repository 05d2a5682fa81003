import { histogram } from '../../kernel/observability/metrics.ts';

export const engineLatency = histogram(
  'engine_call_duration_seconds',
  'Engine call latency by capability, provider and outcome',
  ['capability', 'provider', 'outcome'],
  [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 120],
);
export const engineTtfb = histogram(
  'engine_time_to_first_byte_seconds',
  'Time to first streamed chunk by capability and provider',
  ['capability', 'provider'],
  [0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2, 5],
);

/** Times a promise-returning engine call and records its outcome. */
export async function timed<T>(capability: string, provider: string, fn: () => Promise<T>): Promise<T> {
  const end = engineLatency.startTimer({ capability, provider });
  try {
    const out = await fn();
    end({ outcome: 'ok' });
    return out;
  } catch (e) {
    end({ outcome: 'error' });
    throw e;
  }
}
