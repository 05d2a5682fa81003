import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimitedError } from '../../shared/platform/auth/rate-limiter.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { PortalAuth } from '../../shared/domains/portal/auth.ts';
import type { PortalSession } from '../../shared/domains/portal/sessions.ts';
import { sendApiError } from '../../shared/composition/http/errors.ts';
import { registerRoutes } from '../routes/index.ts';
import { portalAuthRoutes } from './auth-routes.ts';
import { portalReadsRoutes } from './reads-routes.ts';
import { portalWebhookRoutes } from './webhook-routes.ts';
import { checkCsrf, isStateChanging, readSessionCookie } from './session-guard.ts';
import { PORTAL_SECURITY_HEADERS, registerPortalStatic } from './static.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Portal sign-in and sessions (decorated by the portal plugin on the api role). */
    portal: PortalAuth;
  }
  interface FastifyRequest {
    /** The portal session of a request to a session-authenticated /portal/api route. */
    portalSession: PortalSession | null;
  }
}

/**
 * The developer portal on the api role: /portal/api/auth/* (sign-in), /portal/api/v1/* (every /v1 route again,
 * authenticated by the session cookie instead of an API key, hidden from /openapi.json) and the portal-only reads.
 */
async function portal(app: FastifyInstance): Promise<void> {
  const { infra } = app;
  app.decorate('portal', await PortalAuth.create(infra));
  app.decorateRequest('portalSession', null);

  await app.register(
    async (portal) => {
      portal.addHook('onSend', (req, reply, payload, done) => {
        reply.headers(PORTAL_SECURITY_HEADERS);
        // Session-bound answers (a raw key shown once, a CSRF token) must not be stored by any cache.
        if (req.url.startsWith('/portal/api/')) reply.header('cache-control', 'no-store');
        done(null, payload);
      });
      await portal.register(portalAuthRoutes, { prefix: '/api/auth' });
      await portal.register(sessionApi, { prefix: '/api' });
      registerPortalStatic(portal, apiNotFound);
    },
    { prefix: '/portal' },
  );
}

export const portalPlugin = fp(portal, { name: 'portal', dependencies: ['auth'] });

/** The floor of the per-minute limit on the portal's page-view reads. */
const PORTAL_READS_MIN = 1200;

/** Everything under /portal/api that needs a signed-in session: the /v1 mirror and the portal-only reads. */
async function sessionApi(app: FastifyInstance): Promise<void> {
  const { config, rateLimiter } = app.infra;
  const auth = app.portal;

  // The mirror's routes stay out of the OpenAPI document: the documented surface is /v1 with API keys.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });

  app.addHook('onRequest', async (req: FastifyRequest) => {
    const session = await auth.sessions.get(readSessionCookie(req));
    if (!session?.developerId || !session.tier) throw new ApiError('portal_session_required');
    // Vendor callbacks (public in /v1, authenticated by their own signatures) have no place in the portal.
    if (req.routeOptions.config?.public) {
      throw new ApiError('route_not_found', { method: req.method, path: req.url.split('?')[0] });
    }
    if (isStateChanging(req)) checkCsrf(req, config, session);
    req.portalSession = session;
    req.auth = { developerId: session.developerId, keyId: 'portal_session', tier: session.tier };
    // The portal's own traffic never spends the developer's API keys' limit (those count per key). Page views
    // (reads) get a bucket of their own, ten times the tier's limit, so browsing a few pages quickly is never a
    // 429; writes through the portal count against the tier's limit like an API key's would.
    const limit = config.rateLimits[session.tier] ?? config.rateLimits.starter ?? 120;
    const read = req.method === 'GET' || req.method === 'HEAD';
    const rl = read
      ? await rateLimiter.hit(`portal-read:${session.developerId}`, Math.max(PORTAL_READS_MIN, limit * 10))
      : await rateLimiter.hit(`portal:${session.developerId}`, limit);
    req.rateLimit = rl;
    if (!rl.allowed) throw rateLimitedError(rl);
  });

  await registerRoutes(app);
  await app.register(portalReadsRoutes);
  await app.register(portalWebhookRoutes);

  app.setNotFoundHandler(apiNotFound);
}

/**
 * An unknown /portal/api path: without a session the answer is the same 401 as a known one, so the portal's
 * surface cannot be mapped without signing in.
 */
async function apiNotFound(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const session = await req.server.portal.sessions.get(readSessionCookie(req));
  const err = session?.developerId
    ? new ApiError('route_not_found', { method: req.method, path: req.url.split('?')[0] })
    : new ApiError('portal_session_required');
  return sendApiError(reply, err);
}
