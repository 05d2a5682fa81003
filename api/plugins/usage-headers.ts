import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * X-Usage-Current/Limit/Remaining on every authenticated response. The snapshot comes from the meter's
 * in-process cache (refreshed from Redis, written through on every charge), so the common case does no I/O; a
 * backing-store failure leaves the headers out rather than failing the response.
 */
export const usageHeadersPlugin = fp(async (app: FastifyInstance) => {
  const { meter } = app.infra;
  app.addHook('onSend', async (req, reply, payload) => {
    if (!req.auth) return payload;
    try {
      const s = await meter.snapshot(req.auth.developerId);
      reply.header('x-usage-current', s.used);
      reply.header('x-usage-limit', s.limit);
      reply.header('x-usage-remaining', s.remaining);
    } catch (e) {
      req.log.debug({ err: (e as Error).message }, 'usage headers skipped');
    }
    return payload;
  });
});
