import type { AuthContext } from '../../platform/auth/authenticator.ts';
import type { RateLimitResult } from '../../platform/auth/rate-limiter.ts';
import type { Infra } from '../../platform/infra.ts';

/** What the role-neutral server adds to Fastify's types; a role adds its own (api/types.ts). */
declare module 'fastify' {
  interface FastifyInstance {
    infra: Infra;
  }
  interface FastifyRequest {
    /** Set by the auth plugin on every /v1 route. */
    auth: AuthContext;
    rateLimit: RateLimitResult | null;
    /** Set by routes that used an upstream engine; becomes X-Provider-Used. */
    providerUsed: string | null;
    /** True when the caller's own provider key served the request (X-Usage-Bypassed). */
    usageBypassed: boolean;
  }
  interface FastifyContextConfig {
    /** Routes outside API-key auth (health, docs, webhooks from vendors, sockets with their own auth). */
    public?: boolean;
  }
}
