import '../shared/runtime/http/types.ts';

/** What the api role adds to Fastify's types (the role-neutral part is shared/runtime/http/types.ts). */
declare module 'fastify' {
  interface FastifyRequest {
    idempotency: { key: string; developerId: string } | null;
  }
  interface FastifyContextConfig {
    /** Routes that create or charge accept Idempotency-Key. */
    idempotent?: boolean;
  }
}
