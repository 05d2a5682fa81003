import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { acceptTwilioForms, TwilioForm } from './twilio-form.ts';
import { z } from 'zod';
import {
  CallIdParams,
  CreateDirectSessionBody,
  CreateOutboundCallBody,
  CreateTwilioSessionBody,
  DirectSessionToken,
  CutInRates,
  InterruptionQuality,
  InterruptionQualityQuery,
  RootCauseReport,
  SessionDetail,
  SessionIdParams,
  SessionListQuery,
  SessionSummary,
  TaskIdParams,
  TwilioSession,
} from '../../shared/contracts/sessions.ts';
import { pageSchema } from '../../shared/kernel/pagination.ts';
import {
  interruptionQuality,
  cutInRates,
  listSessions,
  recordingKey,
  sessionDetail,
  sessionRootCause,
} from '../services/observability.ts';
import {
  createOutboundTask,
  taskAmd,
  taskConnect,
  taskStatus,
  transferWhisper,
  verifyTwilioSignature,
} from '../services/sessions-outbound.ts';
import { whisperPath } from '../../shared/domains/realtime/twilio-calls.ts';
import { taskPath } from '../../shared/domains/realtime/outbound.ts';
import { requireOwnedAgent, requireOwnedInstance } from '../services/ownership.ts';
import { createDirectSession, createTwilioSession } from '../services/sessions.ts';

/** Sessions (Twilio TwiML, direct-session tokens, outbound calls, Twilio callbacks), observability and recordings. */
export const sessionsRoutes: FastifyPluginAsyncZod = async (app) => {
  const infra = app.infra;
  acceptTwilioForms(app);
  const tags = ['Sessions'];
  const obs = ['Observability'];

  /** A session for another developer's (or another agent's) instance is 404 before any token is signed. */
  async function checkInstance(developerId: string, agentId: string, instanceId: string | undefined) {
    if (!instanceId) return;
    await requireOwnedAgent(infra.db, developerId, agentId);
    await requireOwnedInstance(infra.db, developerId, agentId, instanceId);
  }
  /** An observability filter on another developer's agent is 404, not an empty page. */
  async function checkAgentFilter(developerId: string, agentId: string | undefined) {
    if (agentId) await requireOwnedAgent(infra.db, developerId, agentId);
  }

  app.post(
    '/v1/sessions/twilio',
    {
      schema: {
        tags,
        summary: 'TwiML connecting a call to an agent, with a short-lived session token',
        body: CreateTwilioSessionBody,
        response: { 200: TwilioSession },
      },
    },
    async (req) => {
      await checkInstance(req.auth.developerId, req.body.agentId, req.body.instanceId);
      return createTwilioSession(infra, req.auth.developerId, req.body, { apiKeyId: req.auth.keyId });
    },
  );

  app.post(
    '/v1/sessions/direct',
    {
      schema: {
        tags,
        summary: 'Short-lived token for WS /v1/agents/:id/session (for browsers)',
        body: CreateDirectSessionBody,
        response: { 200: DirectSessionToken },
      },
    },
    async (req) => {
      await checkInstance(req.auth.developerId, req.body.agentId, req.body.instanceId);
      return createDirectSession(infra, req.auth.developerId, req.body, {
        apiKeyId: req.auth.keyId,
        headers: req.headers,
      });
    },
  );

  app.post(
    '/v1/sessions/twilio/outbound',
    {
      schema: {
        tags,
        summary: 'Place an outbound call to an agent (dispatched as a job)',
        body: CreateOutboundCallBody,
        response: { 202: z.object({ taskId: z.string(), status: z.string() }) },
      },
      config: { idempotent: true },
    },
    async (req, reply) => reply.code(202).send(await createOutboundTask(infra, req.auth.developerId, req.body)),
  );

  // Twilio callbacks for outbound calls: signed by Twilio (X-Twilio-Signature), not by an API key.
  app.post(
    '/v1/sessions/twilio/task/:taskId/connect',
    { schema: { hide: true, params: TaskIdParams, body: TwilioForm }, config: { public: true } },
    async (req, reply) => {
      verifyTwilioSignature(
        infra,
        req.headers['x-twilio-signature'] as string | undefined,
        taskPath(req.params.taskId, 'connect'),
        req.body,
      );
      const twiml = await taskConnect(infra, req.params.taskId, req.body);
      return reply.type('text/xml').send(twiml);
    },
  );
  app.post(
    '/v1/sessions/twilio/task/:taskId/status',
    { schema: { hide: true, params: TaskIdParams, body: TwilioForm }, config: { public: true } },
    async (req, reply) => {
      verifyTwilioSignature(
        infra,
        req.headers['x-twilio-signature'] as string | undefined,
        taskPath(req.params.taskId, 'status'),
        req.body,
      );
      await taskStatus(infra, req.params.taskId, req.body);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/sessions/twilio/task/:taskId/amd',
    { schema: { hide: true, params: TaskIdParams, body: TwilioForm }, config: { public: true } },
    async (req, reply) => {
      verifyTwilioSignature(
        infra,
        req.headers['x-twilio-signature'] as string | undefined,
        taskPath(req.params.taskId, 'amd'),
        req.body,
      );
      await taskAmd(infra, req.params.taskId, req.body);
      return reply.code(204).send();
    },
  );
  app.post(
    '/v1/sessions/twilio/whisper/:sessionId',
    { schema: { hide: true, params: SessionIdParams, body: TwilioForm }, config: { public: true } },
    async (req, reply) => {
      verifyTwilioSignature(
        infra,
        req.headers['x-twilio-signature'] as string | undefined,
        whisperPath(req.params.sessionId),
        req.body,
      );
      return reply.type('text/xml').send(await transferWhisper(infra, req.params.sessionId));
    },
  );

  app.get(
    '/v1/observability/sessions',
    {
      schema: {
        tags: obs,
        summary: 'List sessions',
        querystring: SessionListQuery,
        response: { 200: pageSchema(SessionSummary) },
      },
    },
    async (req) => {
      await checkAgentFilter(req.auth.developerId, req.query.agentId);
      return listSessions(infra, req.auth.developerId, req.query);
    },
  );
  // Registered before /:sessionId so the static segment wins (find-my-way prefers static anyway).
  app.get(
    '/v1/observability/sessions/interruption-quality',
    {
      schema: {
        tags: obs,
        summary: 'Barge-in quality across sessions',
        querystring: InterruptionQualityQuery,
        response: { 200: InterruptionQuality },
      },
    },
    async (req) => {
      await checkAgentFilter(req.auth.developerId, req.query.agentId);
      return interruptionQuality(infra, req.auth.developerId, req.query);
    },
  );
  app.get(
    '/v1/observability/sessions/cut-ins',
    {
      schema: {
        tags: obs,
        summary: 'Suspected cut-ins per agent (the caller went on within 500 ms after a reply started)',
        querystring: InterruptionQualityQuery,
        response: { 200: CutInRates },
      },
    },
    async (req) => {
      await checkAgentFilter(req.auth.developerId, req.query.agentId);
      return cutInRates(infra, req.auth.developerId, req.query);
    },
  );
  app.get(
    '/v1/observability/sessions/:sessionId',
    { schema: { tags: obs, summary: 'Session detail', params: SessionIdParams, response: { 200: SessionDetail } } },
    async (req) => sessionDetail(infra, req.auth.developerId, { id: req.params.sessionId }),
  );
  app.get(
    '/v1/observability/sessions/:sessionId/root-cause',
    {
      schema: { tags: obs, summary: 'Root-cause report', params: SessionIdParams, response: { 200: RootCauseReport } },
    },
    async (req) => sessionRootCause(infra, req.auth.developerId, { id: req.params.sessionId }),
  );
  app.get(
    '/v1/observability/calls/:callId',
    {
      schema: { tags: obs, summary: 'Call detail by CallSid', params: CallIdParams, response: { 200: SessionDetail } },
    },
    async (req) => sessionDetail(infra, req.auth.developerId, { callSid: req.params.callId }),
  );
  app.get(
    '/v1/observability/calls/:callId/root-cause',
    {
      schema: {
        tags: obs,
        summary: 'Root-cause report by CallSid',
        params: CallIdParams,
        response: { 200: RootCauseReport },
      },
    },
    async (req) => sessionRootCause(infra, req.auth.developerId, { callSid: req.params.callId }),
  );

  app.get(
    '/v1/recordings/:callId',
    { schema: { tags, summary: 'Stereo WAV of a call (left: caller, right: agent)', params: CallIdParams } },
    async (req, reply) => {
      const key = await recordingKey(infra, req.auth.developerId, req.params.callId);
      const obj = await infra.storage.getStream(key);
      reply.type('audio/wav');
      if (obj.contentLength !== undefined) reply.header('content-length', obj.contentLength);
      return reply.send(obj.body);
    },
  );
};
