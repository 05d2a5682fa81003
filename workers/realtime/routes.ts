import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { startAdmissionNode } from './admission-node.ts';
import { handleDirectSession } from './direct/session-handler.ts';
import { startSessionKeeper } from './call/keeper.ts';
import { endLiveSessions } from './call/live.ts';
import { handleTwilioStream } from './twilio/stream-handler.ts';

/** A plain GET on a socket route: 426 in the envelope (the plugin's default is an empty 404). */
function notUpgraded(): never {
  throw new ApiError('upgrade_required');
}

const PAGE = new URL('./public/index.html', import.meta.url);

/**
 * WebSocket routes of the realtime role: /v1/sessions/twilio/stream and /v1/agents/:id/session, plus the small
 * browser page at /realtime/. Registered by the realtime role, and by the one-process mode on the same server
 * as the API. Both sockets authenticate themselves (token in Twilio's start message; API key or token).
 */
export async function registerRealtimeRoutes(app: FastifyInstance): Promise<void> {
  const infra = app.infra;
  // Sockets are closed before onClose hooks run; wait for their sessions to store traces and recordings.
  app.addHook('onClose', () => endLiveSessions(infra, 'server-shutdown'));
  // Heartbeats for this process's sessions; ends sessions (and recovers recordings) that a dead process left.
  const keeper = startSessionKeeper(infra, infra.log.child({ component: 'session-keeper' }));
  app.addHook('onClose', () => keeper.stop());
  // This process's capacity and load in the fleet's admission picture; a full process refuses new direct sockets.
  const admission = startAdmissionNode(infra);
  app.addHook('onClose', () => admission.stop());
  app.route({
    method: 'GET',
    url: '/v1/sessions/twilio/stream',
    config: { public: true },
    schema: { hide: true },
    handler: notUpgraded,
    wsHandler: (socket) => handleTwilioStream(infra, socket),
  });
  app.route({
    method: 'GET',
    url: '/v1/agents/:id/session',
    config: { public: true },
    schema: { hide: true },
    // Before the upgrade, so a full process answers 503 + Retry-After in the envelope, not a socket it cannot serve.
    preHandler: async () => admission.guard(),
    handler: notUpgraded,
    wsHandler: (socket, req) =>
      void handleDirectSession(
        infra,
        socket,
        req as FastifyRequest<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>,
      ),
  });
  let page: Buffer | null = null;
  app.get('/realtime/', { schema: { hide: true } }, async (_req, reply) => {
    page ??= await readFile(PAGE);
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
  });
}
