import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

/** Routes of the billing area, registered at the root with their full /v1/... paths. */
export const billingRoutes: FastifyPluginAsyncZod = async () => {};
