import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

export const Me = z.object({ developerId: z.string(), keyId: z.string(), tier: z.string() });

/** GET /v1/me: which developer and key a request authenticates as (handy to check a key; no side effects). */
export const accountRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/v1/me',
    { schema: { tags: ['Keys'], summary: 'Who this API key belongs to', response: { 200: Me } } },
    async (req) => ({ developerId: req.auth.developerId, keyId: req.auth.keyId, tier: req.auth.tier }),
  );
};
