import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { httpDuration } from '../../shared/observability/metrics.ts';

/**
 * Per-request bookkeeping every response needs: X-Request-Id (always), X-Provider-Used and X-Usage-Bypassed
 * (authenticated routes), and the latency histogram by route pattern.
 */
export const requestContextPlugin = fp(async (app: FastifyInstance) => {
  app.decorateRequest('providerUsed', null);
  app.decorateRequest('usageBypassed', false);

  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id);
    if (req.auth) {
      reply.header('x-provider-used', req.providerUsed ?? 'none');
      reply.header('x-usage-bypassed', String(req.usageBypassed));
    }
  });

  app.addHook('onResponse', async (req, reply) => {
    httpDuration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
});
