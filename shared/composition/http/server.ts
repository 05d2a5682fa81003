import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { trustProxyOption } from '../../kernel/config/trust-proxy.ts';
import type { Infra } from '../../platform/infra.ts';
import { authPlugin } from './auth.ts';
import { errorHandlerPlugin } from './errors.ts';
import { sendFrameworkError, writeClientError } from './framework-errors.ts';
import { registerHealthRoutes } from './health.ts';
import { inputGuardPlugin } from './input-guard.ts';
import { requestContextPlugin } from './request-context.ts';
import { requestIdOf } from './request-id.ts';
import { productionSerializerCompiler } from './serializer.ts';
import './types.ts';

/** Node's limit on the request line plus headers; above it the HTTP parser answers 431 (or 414 for a URL). */
export const MAX_HEADER_BYTES = 16 * 1024;

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
    genReqId: requestIdOf,
    http: { maxHeaderSize: MAX_HEADER_BYTES },
    // Errors raised before a route runs (bad percent-encoding, an over-long path parameter) and by Node's HTTP
    // parser (431, 414, 408, malformed HTTP) are answered in the one envelope, never echoing the input back.
    frameworkErrors: sendFrameworkError,
    clientErrorHandler: (err, socket) => writeClientError(err, socket, MAX_HEADER_BYTES),
    requestIdHeader: false,
    // No child logger per request (it serialises bindings every time); handlers log with requestId fields.
    childLoggerFactory: (logger) => logger,
    // X-Forwarded-* only from the proxies TRUST_PROXY names (default none): per-IP limits count real clients.
    trustProxy: trustProxyOption(infra.config.TRUST_PROXY),
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
  await app.register(inputGuardPlugin);
  await app.register(requestContextPlugin);
  registerHealthRoutes(app, infra, opts.state);
  if (opts.auth) await app.register(authPlugin);
  return app;
}
