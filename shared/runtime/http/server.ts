import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Infra } from '../infra.ts';
import { authPlugin } from './auth.ts';
import { errorHandlerPlugin } from './errors.ts';
import { registerHealthRoutes } from './health.ts';
import { requestContextPlugin } from './request-context.ts';
import { productionSerializerCompiler } from './serializer.ts';
import './types.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// Request ids: a random per-process part plus a counter. Unique across processes, and no syscall per request.
const REQUEST_ID_BASE = `req_${randomBytes(6).toString('base64url')}`;
let requestCounter = 0;

export interface HttpServerOptions {
  /** API-key authentication and rate limiting on /v1 routes (roles that serve /v1: api, realtime). */
  auth: boolean;
  state: { draining: boolean };
}

/**
 * The HTTP server every role runs: the error envelope, request ids and context headers, /healthz, /readyz and
 * /metrics, and (for roles that serve /v1) API-key auth. Roles add their routes to it (api/server.ts,
 * workers/realtime/server.ts); the one-process mode adds both to one server so that one port reaches everything.
 */
export async function buildHttpServer(infra: Infra, opts: HttpServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: infra.log.child({ component: 'http' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
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
  if (opts.auth) await app.register(authPlugin);
  return app;
}
