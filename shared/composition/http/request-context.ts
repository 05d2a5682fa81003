import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { httpDuration } from '../../kernel/observability/metrics.ts';

/**
 * Per-request bookkeeping every response needs: X-Request-Id (always), X-Provider-Used and X-Usage-Bypassed
 * (authenticated routes), and the latency histogram by route pattern.
 */
async function requestContext(app: FastifyInstance): Promise<void> {
  app.decorateRequest('providerUsed', null);
  app.decorateRequest('usageBypassed', false);

  // Callback-style hooks (no promise per request): they run on every response.
  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id);
    if (req.auth) {
      reply.header('x-provider-used', req.providerUsed ?? 'none');
      reply.header('x-usage-bypassed', req.usageBypassed ? 'true' : 'false');
    }
    done(null, payload);
  });

  app.addHook('onResponse', (req, reply, done) => {
    httpDuration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
}

export const requestContextPlugin = fp(requestContext, { name: 'request-context' });
