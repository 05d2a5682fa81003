import type { AuthContext } from '../shared/auth/authenticator.ts';
import type { RateLimitResult } from '../shared/auth/rate-limiter.ts';
import type { Infra } from '../shared/runtime/infra.ts';

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
    idempotency: { key: string; developerId: string } | null;
  }
  interface FastifyContextConfig {
    /** Routes that create or charge accept Idempotency-Key. */
    idempotent?: boolean;
    /**
     * Response fields (dot paths) holding a secret shown once. They are never stored for replay: `conflict`
     * answers a replay with 409 naming the created resource (the secret is the point of the response);
     * `redacted` replays the body without them (the secret can be fetched on its own route).
     */
    idempotentSecrets?: { fields: string[]; replay: 'conflict' | 'redacted'; resource: string };
    /** Routes outside API-key auth (health, docs, webhooks from vendors, sockets with their own auth). */
    public?: boolean;
  }
}
