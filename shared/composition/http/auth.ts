import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimitedError } from '../../platform/auth/rate-limiter.ts';

/**
 * API-key authentication and per-key rate limiting on every /v1 route (unless the route is marked public,
 * such as vendor callbacks that carry their own signature). Runs in onRequest so that rejected requests never
 * parse a body.
 */
async function auth(app: FastifyInstance): Promise<void> {
  const { authenticator, rateLimiter, config } = app.infra;
  app.decorateRequest('auth', null as never);
  app.decorateRequest('rateLimit', null);

  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (!req.url.startsWith('/v1/') || req.routeOptions.config?.public) return;
    req.auth = await authenticator.authenticate(req.headers.authorization);
    const limit = config.rateLimits[req.auth.tier] ?? config.rateLimits.starter ?? 120;
    const rl = await rateLimiter.hit(req.auth.keyId, limit);
    req.rateLimit = rl;
    if (!rl.allowed) throw rateLimitedError(rl);
  });

  // Callback-style (no promise per request): this runs on every response.
  app.addHook('onSend', (req, reply, payload, done) => {
    const rl = req.rateLimit;
    if (rl) {
      reply.header('x-ratelimit-limit', rl.limit);
      reply.header('x-ratelimit-remaining', rl.remaining);
      reply.header('x-ratelimit-reset', rl.resetSeconds);
      reply.header('ratelimit-policy', `"default";q=${rl.limit};w=${rl.windowSeconds}`);
      reply.header('ratelimit', `"default";r=${rl.remaining};t=${rl.resetSeconds}`);
    }
    done(null, payload);
  });
}

export const authPlugin = fp(auth, { name: 'auth', dependencies: ['error-handler'] });
