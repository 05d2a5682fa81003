import type { FastifyInstance } from 'fastify';

/**
 * WebSocket routes of the realtime role: /v1/sessions/twilio/stream and /v1/agents/:id/session. Registered by
 * the realtime role, and by the one-process mode on the same server as the API.
 */
export async function registerRealtimeRoutes(_app: FastifyInstance): Promise<void> {}
