import type { FastifyInstance } from 'fastify';
import { registry } from '../../kernel/observability/metrics.ts';
import type { Infra } from '../../platform/infra.ts';

/**
 * /healthz (the process is alive), /readyz (Postgres, Redis and S3 answer; 503 naming the failing one without its
 * error text, and 503
 * once draining so load balancers stop sending work) and /metrics, on every role.
 */
export function registerHealthRoutes(app: FastifyInstance, infra: Infra, state: { draining: boolean }): void {
  const hide = { schema: { hide: true }, config: { public: true } };
  app.get('/healthz', hide, async () => ({ status: 'ok' }));
  app.get('/readyz', hide, async (_req, reply) => {
    if (state.draining) return reply.code(503).send({ status: 'draining' });
    const found = await infra.checkReady();
    const ok = Object.values(found).every((v) => v === 'ok');
    // /readyz is unauthenticated: it names the failing dependency, never its error text (hosts, ports, paths).
    // The operator reads the reason in the log.
    const checks = Object.fromEntries(Object.entries(found).map(([k, v]) => [k, v === 'ok' ? 'ok' : 'unavailable']));
    if (!ok) infra.log.warn({ checks: found }, 'not ready');
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks });
  });
  app.get('/metrics', hide, async (_req, reply) => {
    const queueMetrics = await Promise.all(infra.queues.all().map((q) => q.exportPrometheusMetrics().catch(() => '')));
    reply.type(registry.contentType);
    // Each queue repeats the HELP/TYPE header of bullmq_job_count; the text format allows it once.
    const seen = new Set<string>();
    const queueLines = queueMetrics
      .join('\n')
      .split('\n')
      .filter((l) => l !== '' && (!l.startsWith('#') || (!seen.has(l) && seen.add(l))));
    return (await registry.metrics()) + '\n' + queueLines.join('\n') + '\n';
  });
}
