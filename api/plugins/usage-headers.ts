import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import type { UsageSnapshot } from '../../shared/platform/metering/types.ts';

function setHeaders(reply: FastifyReply, s: UsageSnapshot): void {
  reply.header('x-usage-current', s.used);
  reply.header('x-usage-limit', s.limit);
  reply.header('x-usage-remaining', s.remaining);
}

/**
 * X-Usage-Current/Limit/Remaining on every authenticated response. The snapshot comes from the meter's
 * in-process cache (refreshed from Redis, written through on every charge): the common case is a synchronous map
 * lookup with no I/O and no promise. A backing-store failure leaves the headers out rather than failing the
 * response.
 */
async function usageHeaders(app: FastifyInstance): Promise<void> {
  const { meter } = app.infra;
  app.addHook('onSend', (req, reply, payload, done) => {
    if (!req.auth) return done(null, payload);
    const cached = meter.peek(req.auth.developerId);
    if (cached) {
      setHeaders(reply, cached);
      return done(null, payload);
    }
    meter.snapshot(req.auth.developerId).then(
      (s) => {
        setHeaders(reply, s);
        done(null, payload);
      },
      (e: Error) => {
        req.log.debug({ err: e.message }, 'usage headers skipped');
        done(null, payload);
      },
    );
  });
}

export const usageHeadersPlugin = fp(usageHeaders, {
  name: 'usage-headers',
  dependencies: ['auth', 'request-context'],
});
