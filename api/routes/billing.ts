import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  CheckoutBody,
  CheckoutResult,
  PortalBody,
  PortalResult,
  ProviderKeyItem,
  ProviderKeyList,
  ProviderParams,
  StoreProviderKeyBody,
  SpendingCaps,
  SpendingCapsBody,
  Subscription,
  Usage,
  VerifyResult,
} from '../../shared/contracts/billing.ts';
import { createCheckout, createPortal, getSubscription } from '../services/billing.ts';
import { handleStripeWebhook } from '../../shared/domains/billing/stripe-webhooks.ts';
import {
  listStoredProviderKeys,
  removeProviderKey,
  storeProviderKey,
  verifyProviderKey,
} from '../services/provider-keys.ts';
import { usageReport } from '../services/usage.ts';
import { Estimate, EstimateBody } from '../../shared/domains/billing/estimate-contracts.ts';
import { estimate } from '../services/estimate.ts';
import { spendingCaps, updateSpendingCaps } from '../services/spending-caps.ts';

const MAX_WEBHOOK_BYTES = 1024 * 1024;

/** Routes of the billing area, registered at the root with their full /v1/... paths, plus the Stripe receiver. */
export const billingRoutes: FastifyPluginAsyncZod = async (app) => {
  const { infra } = app;

  app.get(
    '/v1/usage',
    { schema: { tags: ['Usage'], summary: 'Credits used in the current period', response: { 200: Usage } } },
    async (req) => usageReport(infra, req.auth.developerId),
  );

  app.post(
    '/v1/estimate',
    {
      schema: {
        tags: ['Usage'],
        summary:
          'Price a planned call, synthesis, transcription or video job for your tier and keys (nothing is charged)',
        body: EstimateBody,
        response: { 200: Estimate },
      },
    },
    async (req) => estimate(infra, req.auth, req.body, req.headers),
  );

  app.get(
    '/v1/billing/spending-caps',
    {
      schema: {
        tags: ['Billing'],
        summary: 'Daily spending caps (developer and per API key) and what was spent today',
        response: { 200: SpendingCaps },
      },
    },
    async (req) => spendingCaps(infra, req.auth.developerId),
  );

  app.put(
    '/v1/billing/spending-caps',
    {
      schema: {
        tags: ['Billing'],
        summary: 'Set or remove daily spending caps (null removes; fields left out stay)',
        body: SpendingCapsBody,
        response: { 200: SpendingCaps },
      },
    },
    async (req) => updateSpendingCaps(infra, req.auth.developerId, req.body),
  );

  const billing = ['Billing'];
  app.get(
    '/v1/billing/subscription',
    { schema: { tags: billing, summary: 'Tier, plan and credits', response: { 200: Subscription } } },
    async (req) => getSubscription(infra, req.auth.developerId),
  );

  app.post(
    '/v1/billing/checkout',
    {
      schema: {
        tags: billing,
        summary: 'Start a hosted Checkout for a tier (subscription)',
        body: CheckoutBody,
        response: { 200: CheckoutResult },
      },
      config: { idempotent: true },
    },
    async (req) => createCheckout(infra, req.auth.developerId, req.body),
  );

  app.post(
    '/v1/billing/portal',
    {
      schema: {
        tags: billing,
        summary: 'Open the hosted billing portal',
        body: PortalBody.nullish(),
        response: { 200: PortalResult },
      },
    },
    async (req) => createPortal(infra, req.auth.developerId, req.body?.returnUrl),
  );

  const keys = ['Provider keys'];
  app.post(
    '/v1/provider-keys',
    {
      schema: {
        tags: keys,
        summary: 'Store a provider key (encrypted; replaces an earlier one for the provider)',
        body: StoreProviderKeyBody,
        response: { 201: ProviderKeyItem },
      },
    },
    async (req, reply) => {
      const item = await storeProviderKey(infra, req.auth.developerId, req.body.provider, req.body.apiKey);
      return reply.code(201).send(item);
    },
  );

  app.get(
    '/v1/provider-keys',
    { schema: { tags: keys, summary: 'List stored provider keys', response: { 200: ProviderKeyList } } },
    async (req) => ({
      data: await listStoredProviderKeys(infra, req.auth.developerId),
      hasMore: false,
    }),
  );

  app.post(
    '/v1/provider-keys/:provider/verify',
    {
      schema: {
        tags: keys,
        summary: "Check a stored key against the provider's cheapest authenticated endpoint",
        params: ProviderParams,
        response: { 200: VerifyResult },
      },
    },
    async (req) => verifyProviderKey(infra, req.auth.developerId, req.params.provider),
  );

  app.delete(
    '/v1/provider-keys/:provider',
    { schema: { tags: keys, summary: 'Delete a stored provider key', params: ProviderParams } },
    async (req, reply) => {
      await removeProviderKey(infra, req.auth.developerId, req.params.provider);
      return reply.code(204).send();
    },
  );

  await app.register(stripeWebhookRoutes);
};

/**
 * POST /webhooks/stripe: outside /v1 (Stripe has no API key; the signature authenticates). Encapsulated so that
 * its raw-body JSON parser applies to this route only: the signature covers the exact bytes Stripe sent.
 */
async function stripeWebhookRoutes(app: FastifyInstance): Promise<void> {
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: MAX_WEBHOOK_BYTES },
    (_req, body, done) => done(null, body),
  );
  app.post(
    '/webhooks/stripe',
    {
      schema: {
        hide: true,
        response: { 200: z.object({ received: z.literal(true), duplicate: z.boolean(), effect: z.string() }) },
      },
      config: { public: true },
      bodyLimit: MAX_WEBHOOK_BYTES,
    },
    async (req) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      return handleStripeWebhook(app.infra, body, req.headers['stripe-signature']);
    },
  );
}
