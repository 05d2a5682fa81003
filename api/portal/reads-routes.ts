import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  BillingSetup,
  CollectionDocument,
  CollectionDocumentsParams,
  DailyUsage,
  DailyUsageQuery,
  VoiceEngineList,
  WebhookOverview,
  WebhooksQuery,
} from '../../shared/contracts/portal.ts';
import { stripeSettings } from '../../shared/platform/metering/settings.ts';
import { CallIdParams } from '../../shared/contracts/sessions.ts';
import { VideoJob } from '../../shared/contracts/video.ts';
import { z } from 'zod';
import { PageQuery, pageSchema } from '../../shared/kernel/pagination.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { recordingKey } from '../services/observability.ts';
import { collectionDocuments } from '../services/portal-documents.ts';
import { voiceEngineInfo } from '../services/portal-engines.ts';
import { dailyUsage, listVideoJobs, videoOutputKey, webhookOverview } from '../services/portal-reads.ts';

/** Reads only the portal needs (registered under the session guard, so req.auth is the signed-in developer). */
export const portalReadsRoutes: FastifyPluginAsyncZod = async (app) => {
  const infra = app.infra;

  app.get('/usage/daily', { schema: { querystring: DailyUsageQuery, response: { 200: DailyUsage } } }, async (req) =>
    dailyUsage(infra, req.auth.developerId, req.query),
  );

  // The billing page disables its Stripe buttons up front (saying why) rather than failing on the click.
  app.get('/billing/setup', { schema: { response: { 200: BillingSetup } } }, async () => ({
    stripeConfigured: stripeSettings(infra.config) !== null,
  }));

  // The agent form's voice list, labelled like /v1/llm-providers labels the LLMs.
  app.get('/voice-engines', { schema: { response: { 200: VoiceEngineList } } }, async (req) => ({
    data: await voiceEngineInfo(infra, req.auth.developerId),
  }));

  app.get(
    '/collections/:id/documents',
    {
      schema: {
        params: CollectionDocumentsParams,
        querystring: PageQuery,
        response: { 200: pageSchema(CollectionDocument) },
      },
    },
    async (req) => collectionDocuments(infra, req.auth.developerId, req.params.id, req.query.limit, req.query.cursor),
  );

  app.get('/video/jobs', { schema: { querystring: PageQuery, response: { 200: pageSchema(VideoJob) } } }, async (req) =>
    listVideoJobs(infra, req.auth.developerId, req.query.limit, req.query.cursor),
  );

  // Same-origin video for the video page's player (the presigned video_url is another origin, outside the CSP).
  app.get(
    '/video/jobs/:jobId/output',
    { schema: { params: z.object({ jobId: z.string().min(1).max(100) }) } },
    async (req, reply) => {
      const key = await videoOutputKey(infra, req.auth.developerId, req.params.jobId);
      return sendStored(infra, req, reply, key, key.endsWith('.webm') ? 'video/webm' : 'video/mp4');
    },
  );

  app.get('/webhooks', { schema: { querystring: WebhooksQuery, response: { 200: WebhookOverview } } }, async (req) =>
    webhookOverview(infra, req.auth.developerId, req.query.reveal === '1' || req.query.reveal === 'true'),
  );

  // Same-origin audio for the call page's player, so the portal's CSP can stay media-src 'self'.
  app.get('/recordings/:callId/audio', { schema: { params: CallIdParams } }, async (req, reply) => {
    const key = await recordingKey(infra, req.auth.developerId, req.params.callId);
    return sendStored(infra, req, reply, key, 'audio/wav');
  });
};

/**
 * Streams a stored object to a media player. Byte ranges are honoured so the player can seek; a range past the
 * end falls back to the whole file.
 */
async function sendStored(infra: Infra, req: FastifyRequest, reply: FastifyReply, key: string, type: string) {
  const range = req.headers.range;
  const wanted = typeof range === 'string' && /^bytes=\d+-\d*$/.test(range) ? range : undefined;
  const obj = await infra.storage
    .getStream(key, wanted)
    .catch((e: Error) => (wanted && e.name === 'InvalidRange' ? infra.storage.getStream(key) : Promise.reject(e)));
  reply.type(type).header('accept-ranges', 'bytes');
  if (obj.contentRange) reply.code(206).header('content-range', obj.contentRange);
  if (obj.contentLength !== undefined) reply.header('content-length', obj.contentLength);
  return reply.send(obj.body);
}
