import '../shared/composition/http/types.ts';

/** What the api role adds to Fastify's types (the role-neutral part is shared/composition/http/types.ts). */
declare module 'fastify' {
  interface FastifyRequest {
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
  }
}
