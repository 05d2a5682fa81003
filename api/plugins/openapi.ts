import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

/** The OpenAPI document is generated from the routes' zod schemas; served at /openapi.json, browsable at /docs. */
export const openapiPlugin = fp(async (app: FastifyInstance) => {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Voice Agent Platform API',
        version: '1.0.0',
        description:
          'Speech, video jobs, voice agents, retrieval collections, realtime sessions and credits. Every /v1 route ' +
          'takes `Authorization: Bearer <key>`. Errors share one envelope: `{"error": {type, code, message, param, requestId}}`.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key (vap_…)' } },
      },
      security: [{ bearerAuth: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
});
