import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { idempotencyPlugin } from './plugins/idempotency.ts';
import { openapiPlugin } from './plugins/openapi.ts';
import { portalPlugin } from './portal/plugin.ts';
import { usageHeadersPlugin } from './plugins/usage-headers.ts';
import { registerRoutes } from './routes/index.ts';
import './types.ts';

export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

/**
 * The api role on the role-neutral server (shared/composition/http/server.ts, built with auth): OpenAPI docs,
 * uploads, Idempotency-Key, the X-Usage-* headers, every REST route and the developer portal.
 */
export async function registerApiRole(app: FastifyInstance): Promise<void> {
  await app.register(openapiPlugin);
  await app.register(multipart, {
    limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 30, fieldSize: 1024 * 1024 },
  });
  await app.register(idempotencyPlugin);
  await app.register(usageHeadersPlugin);
  await registerRoutes(app);
  await app.register(portalPlugin);
}
