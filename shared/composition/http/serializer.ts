import type { FastifySerializerCompiler } from 'fastify/types/schema.js';

/**
 * Production response serializer: plain JSON.stringify. The zod schemas still describe the responses (OpenAPI)
 * and are enforced in development and test by fastify-type-provider-zod's validating serializer.
 */
export const productionSerializerCompiler: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);
