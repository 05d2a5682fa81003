import type { FastifyInstance } from 'fastify';
import { accountRoutes } from './account.ts';
import { agentTestsRoutes } from './agent-tests.ts';
import { agentsRoutes } from './agents.ts';
import { agentVersionsRoutes } from './agent-versions.ts';
import { billingRoutes } from './billing.ts';
import { callReplayRoutes } from './call-replay.ts';
import { campaignsRoutes } from './campaigns.ts';
import { collectionsRoutes } from './collections.ts';
import { keysRoutes } from './keys.ts';
import { sessionsRoutes } from './sessions.ts';
import { speechRoutes } from './speech.ts';
import { videoRoutes } from './video.ts';

/** One encapsulated plugin per resource area. Areas spanning several prefixes register full paths. */
export async function registerRoutes(app: FastifyInstance): Promise<void> {
  await app.register(accountRoutes);
  await app.register(keysRoutes, { prefix: '/v1/keys' });
  await app.register(billingRoutes);
  await app.register(speechRoutes);
  await app.register(collectionsRoutes);
  await app.register(agentsRoutes);
  await app.register(agentVersionsRoutes);
  await app.register(agentTestsRoutes);
  await app.register(sessionsRoutes);
  await app.register(callReplayRoutes);
  await app.register(campaignsRoutes);
  await app.register(videoRoutes);
}
