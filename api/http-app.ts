import { randomBytes } from 'node:crypto';
import multipart from '@fastify/multipart';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { productionSerializerCompiler } from './plugins/serializer.ts';
import type { Infra } from '../shared/runtime/infra.ts';
import { registerHealthRoutes } from '../shared/runtime/health-routes.ts';
import { registerRealtimeRoutes } from '../workers/realtime/routes.ts';
import { authPlugin } from './plugins/auth.ts';
import { errorHandlerPlugin } from './plugins/error-handler.ts';
import { idempotencyPlugin } from './plugins/idempotency.ts';
import { openapiPlugin } from './plugins/openapi.ts';
import { portalPlugin } from './portal/plugin.ts';
import { requestContextPlugin } from './plugins/request-context.ts';
import { usageHeadersPlugin } from './plugins/usage-headers.ts';
import { registerRoutes } from './routes/index.ts';
import './types.ts';

export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// Request ids: a random per-process part plus a counter. Unique across processes, and no syscall per request.
const REQUEST_ID_BASE = `req_${randomBytes(6).toString('base64url')}`;
let requestCounter = 0;

export interface HttpAppOptions {
  api: boolean;
  realtime: boolean;
  state: { draining: boolean };
}

/**
 * The HTTP server of a role: health and metrics always; the REST API and/or the realtime sockets depending on
 * the role. The one-process mode serves both from one port so that one base URL reaches everything.
 */
export async function buildHttpApp(infra: Infra, opts: HttpAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: infra.log.child({ component: 'http' }) as FastifyBaseLogger,
    disableRequestLogging: true,
    // JSON bodies: ingest allows 1 MB of content, which with JSON escaping needs some room above 1 MiB.
    bodyLimit: 4 * 1024 * 1024,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming)
        ? incoming
        : `${REQUEST_ID_BASE}${(requestCounter++).toString(36)}`;
    },
    requestIdHeader: false,
    // No child logger per request (it serialises bindings every time); handlers log with requestId fields.
    childLoggerFactory: (logger) => logger,
    trustProxy: true,
    // Draining: the listener closes and /readyz answers 503 so load balancers move away, but requests that
    // reach us on connections already open are served, not refused. With Fastify's 503-on-closing, a request
    // whose body was still arriving at SIGTERM was answered 503 under load (test/foundation/shutdown.test.ts).
    return503OnClosing: false,
  });
  app.setValidatorCompiler(validatorCompiler);
  // Responses are checked against their schemas in development and test, where a mismatch is a bug to catch;
  // production only stringifies them (the check costs several per cent of a cheap request).
  app.setSerializerCompiler(infra.config.NODE_ENV === 'production' ? productionSerializerCompiler : serializerCompiler);
  app.decorate('infra', infra);

  await app.register(errorHandlerPlugin);
  await app.register(requestContextPlugin);
  registerHealthRoutes(app, infra, opts.state);
  if (opts.api || opts.realtime) await app.register(authPlugin);
  if (opts.realtime) {
    await app.register(websocket, { options: { maxPayload: 1024 * 1024 } });
    await registerRealtimeRoutes(app);
  }
  if (opts.api) {
    await app.register(openapiPlugin);
    await app.register(multipart, {
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 30, fieldSize: 1024 * 1024 },
    });
    await app.register(idempotencyPlugin);
    await app.register(usageHeadersPlugin);
    await registerRoutes(app);
    await app.register(portalPlugin);
  }
  return app;
}
