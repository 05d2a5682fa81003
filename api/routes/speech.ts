import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

/** Routes of the speech area, registered at the root with their full /v1/... paths. */
export const speechRoutes: FastifyPluginAsyncZod = async () => {};
