import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { OpenAPIV3 } from 'openapi-types';
import fp from 'fastify-plugin';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { addUploadBodies } from './openapi-uploads.ts';

/**
 * The realtime role's WebSocket endpoints. They are not routes of this process, so the document lists them by hand
 * (OpenAPI has no WebSocket operation: a GET answered with 101). The protocols are in docs/realtime.md.
 */
const WEBSOCKET_PATHS: OpenAPIV3.PathsObject = {
  '/v1/sessions/twilio/stream': {
    get: {
      tags: ['Sessions'],
      summary: 'Twilio Media Streams socket (WebSocket, realtime role)',
      description:
        "Twilio connects here from the TwiML of POST /v1/sessions/twilio. Twilio's message flow (connected, start, " +
        'media, dtmf, mark, stop); authenticated by the signed session token in `start.customParameters.token`. ' +
        'Closes 1008 on a bad token, 1003 on binary frames, 1007 on malformed JSON, 1011 `insufficient_credits`.',
      security: [],
      responses: { '101': { description: 'Switching Protocols' } },
    },
  },
  '/v1/agents/{id}/session': {
    get: {
      tags: ['Sessions'],
      summary: 'Direct voice session (WebSocket, realtime role)',
      description:
        'JSON control messages and binary PCM16 (16 kHz in; 16 or 24 kHz out) for browsers and custom clients. ' +
        'Authenticated by an API key (Authorization header) or `?token=` from POST /v1/sessions/direct.',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { '101': { description: 'Switching Protocols' } },
    },
  },
};

/** The OpenAPI document is generated from the routes' zod schemas; served at /openapi.json, browsable at /docs. */
async function openapi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Voice Agent Platform API',
        version: '1.0.0',
        description:
          'Speech, video jobs, voice agents, retrieval collections, realtime sessions and credits. Every /v1 route ' +
          'takes `Authorization: Bearer <key>`. Errors share one envelope: `{"error": {type, code, message, param, requestId}}`. ' +
          'Fields the contract types as strings are strings or absent, never null: absent means not set. ' +
          '`nextCursor` is absent on the last page, `expiresAt`/`lastUsedAt` of a key that never expires / was never ' +
          "used, `completed_at`/`completedAt` of an unfinished job, the subscription's `paymentCustomerId`, " +
          "`tierExpiresAt` and `subscriptionStatus` until they exist, a session's `startedAt`/`endedAt` until it " +
          "starts/ends (and its `callId`, `recordingUrl`, `endReason`, `answeredBy` until known), a provider key's " +
          "`verifiedAt` until verified. The same holds for numbers and objects of our extensions (an agent's " +
          "`turnTaking`, `voicemail`, `callTools`, `maxDurationSeconds`, `maxCredits`; an estimate's `overage`, " +
          "`dailyCap`, `assumptions`; a replay's `summary` and latencies; a call's `beepAtMs`, `transfer` and turn " +
          'latencies). Fields the contract types "or null" (`ttsModel`, `collectionId`, `styleProfile`) keep null.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key (vap_…)' } },
      },
      security: [{ bearerAuth: [] }],
      paths: WEBSOCKET_PATHS,
    },
    transform: jsonSchemaTransform,
    transformObject: (doc) => addUploadBodies((doc as { openapiObject: OpenAPIV3.Document }).openapiObject),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
}

export const openapiPlugin = fp(openapi, { name: 'openapi' });
