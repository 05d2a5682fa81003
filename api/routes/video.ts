import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import {
  AnalyzeVideoBody,
  AvatarVideoBody,
  DubVideoBody,
  GenerateVideoBody,
  LipsyncVideoBody,
  VideoEngineList,
  VideoJob,
  VideoJobParams,
  WebhookSecret,
  WebhookSecretQuery,
  type VideoJobType,
} from '../../shared/contracts/video.ts';
import { getVideoJobFor, listAvatarEngines, submitVideoJob } from '../services/video.ts';
import { ensureWebhookSecret, readWebhookSecret } from '../services/webhooks.ts';

const SUBMIT: { type: VideoJobType; body: z.ZodType; summary: string }[] = [
  { type: 'generate', body: GenerateVideoBody, summary: 'Text-to-video (default: a typographic title card)' },
  { type: 'avatar', body: AvatarVideoBody, summary: 'Talking-head video from a still image plus audio or text' },
  { type: 'lipsync', body: LipsyncVideoBody, summary: 'Re-sync a video’s mouth to replacement audio' },
  { type: 'dub', body: DubVideoBody, summary: 'Transcribe, translate, re-voice and re-lipsync a video' },
  { type: 'analyze', body: AnalyzeVideoBody, summary: 'Transcript, scenes and embeddings of a video' },
];

/** Routes of the video area, registered at the root with their full /v1/... paths. */
export const videoRoutes: FastifyPluginAsyncZod = async (app) => {
  const infra = app.infra;
  const tags = ['Video'];

  for (const s of SUBMIT) {
    app.post(
      `/v1/video/${s.type}`,
      { schema: { tags, summary: s.summary, body: s.body, response: { 202: VideoJob } }, config: { idempotent: true } },
      async (req, reply) => {
        const { billable, ...job } = await submitVideoJob(infra, {
          developerId: req.auth.developerId,
          requestId: req.id,
          type: s.type,
          body: req.body as never,
          headers: req.headers,
        });
        req.providerUsed = job.provider;
        req.usageBypassed = !billable;
        return reply.code(202).header('location', `/v1/video/${job.id}`).send(job);
      },
    );
  }

  app.get(
    '/v1/video/avatar/engines',
    {
      schema: {
        tags,
        summary: 'The avatar engines (local, five self-hosted GPU engines, one commercial) and which can run here',
        response: { 200: VideoEngineList },
      },
    },
    async (req) => listAvatarEngines(infra, req.auth.developerId, req.headers),
  );

  app.get(
    '/v1/video/:jobId',
    { schema: { tags, summary: 'A video job (owner only)', params: VideoJobParams, response: { 200: VideoJob } } },
    async (req) => {
      const job = await getVideoJobFor(infra, req.auth.developerId, req.params.jobId);
      req.providerUsed = job.provider;
      return job;
    },
  );

  app.get(
    '/v1/webhooks/secret',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'The signing secret of a webhook address (404 until a job or POST /v1/webhooks/secret made it)',
        querystring: WebhookSecretQuery,
        response: { 200: WebhookSecret },
      },
    },
    async (req) => readWebhookSecret(infra, req.auth.developerId, req.query.url),
  );

  app.post(
    '/v1/webhooks/secret',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'Create the signing secret of a webhook address (201), or return the one it has (200)',
        body: WebhookSecretQuery,
        response: { 200: WebhookSecret, 201: WebhookSecret },
      },
    },
    async (req, reply) => {
      const { created, body } = await ensureWebhookSecret(infra, req.auth.developerId, req.body.url);
      return reply.code(created ? 201 : 200).send(body);
    },
  );
};
