import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** X-Usage-Current/Limit/Remaining on every authenticated response (filled in by the credits work). */
export const usageHeadersPlugin = fp(async (_app: FastifyInstance) => {});
