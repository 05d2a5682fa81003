import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  WebhookEndpoint,
  WebhookEndpointBody,
  WebhookEndpointParams,
  WebhookTestResult,
} from '../../shared/contracts/portal.ts';
import { addWebhookEndpoint, removeWebhookEndpoint, testWebhookEndpoint } from '../services/portal-webhooks.ts';

/** /portal/api/webhooks/endpoints: add an address, send it a signed test event, remove it (session-guarded). */
export const portalWebhookRoutes: FastifyPluginAsyncZod = async (app) => {
  const infra = app.infra;

  app.post(
    '/webhooks/endpoints',
    { schema: { body: WebhookEndpointBody, response: { 201: WebhookEndpoint } } },
    async (req, reply) => reply.code(201).send(await addWebhookEndpoint(infra, req.auth.developerId, req.body.url)),
  );

  app.post(
    '/webhooks/endpoints/:id/test',
    { schema: { params: WebhookEndpointParams, response: { 200: WebhookTestResult } } },
    async (req) => testWebhookEndpoint(infra, req.auth.developerId, req.params.id),
  );

  app.delete('/webhooks/endpoints/:id', { schema: { params: WebhookEndpointParams } }, async (req, reply) => {
    await removeWebhookEndpoint(infra, req.auth.developerId, req.params.id);
    return reply.code(204).send();
  });
};
