import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { DailyUsage, DailyUsageQuery, WebhookOverview, WebhooksQuery } from '../../shared/contracts/portal.ts';
import { CallIdParams } from '../../shared/contracts/sessions.ts';
import { VideoJob } from '../../shared/contracts/video.ts';
import { PageQuery, pageSchema } from '../../shared/pagination.ts';
import { recordingKey } from '../services/observability.ts';
import { dailyUsage, listVideoJobs, webhookOverview } from '../services/portal-reads.ts';

/** Reads only the portal needs (registered under the session guard, so req.auth is the signed-in developer). */
export const portalReadsRoutes: FastifyPluginAsyncZod = async (app) => {
  const infra = app.infra;

  app.get('/usage/daily', { schema: { querystring: DailyUsageQuery, response: { 200: DailyUsage } } }, async (req) =>
    dailyUsage(infra, req.auth.developerId, req.query),
  );

  app.get('/video/jobs', { schema: { querystring: PageQuery, response: { 200: pageSchema(VideoJob) } } }, async (req) =>
    listVideoJobs(infra, req.auth.developerId, req.query.limit, req.query.cursor),
  );

  app.get('/webhooks', { schema: { querystring: WebhooksQuery, response: { 200: WebhookOverview } } }, async (req) =>
    webhookOverview(infra, req.auth.developerId, req.query.reveal === '1' || req.query.reveal === 'true'),
  );

  // Same-origin audio for the call page's player, so the portal's CSP can stay media-src 'self'. Byte ranges are
  // honoured so the player can seek; a range past the end falls back to the whole file.
  app.get('/recordings/:callId/audio', { schema: { params: CallIdParams } }, async (req, reply) => {
    const key = await recordingKey(infra, req.auth.developerId, req.params.callId);
    const range = req.headers.range;
    const wanted = typeof range === 'string' && /^bytes=\d+-\d*$/.test(range) ? range : undefined;
    const obj = await infra.storage
      .getStream(key, wanted)
      .catch((e: Error) => (wanted && e.name === 'InvalidRange' ? infra.storage.getStream(key) : Promise.reject(e)));
    reply.type('audio/wav').header('accept-ranges', 'bytes');
    if (obj.contentRange) reply.code(206).header('content-range', obj.contentRange);
    if (obj.contentLength !== undefined) reply.header('content-length', obj.contentLength);
    return reply.send(obj.body);
  });
};
