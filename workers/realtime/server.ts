import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { registerRealtimeRoutes } from './routes.ts';

/**
 * The realtime role on the role-neutral server (shared/composition/http/server.ts): the WebSocket plugin and the
 * session sockets. Alone it serves only these and health; in the one-process mode the api's routes share the port.
 */
export async function registerRealtimeRole(app: FastifyInstance): Promise<void> {
  await app.register(websocket, { options: { maxPayload: 1024 * 1024 } });
  await registerRealtimeRoutes(app);
}
