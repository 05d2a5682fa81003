import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CallReplay, CallReplayBody, CallReplayParams } from '../../shared/contracts/call-replay.ts';
import { CallIdParams } from '../../shared/contracts/sessions.ts';
import { PageQuery, pageSchema } from '../../shared/kernel/pagination.ts';
import { getReplay, listReplays, requestReplay } from '../services/call-replay.ts';

const tags = ['Agents'];

/** Call replay (issue 21): a recorded call played again through the agent, with the per-turn diff of then and now. */
export const callReplayRoutes: FastifyPluginAsyncZod = async (app) => {
  const infra = app.infra;
  app.post(
    '/v1/calls/:callId/replay',
    {
      schema: {
        tags,
        summary: "Replay a recorded call's caller turns through the agent (now, or a version) and diff each turn",
        params: CallIdParams,
        body: CallReplayBody,
        response: { 202: CallReplay },
      },
      // No body at all (or an empty one, see input-guard.ts) is the default replay: the agent as it is now. A JSON
      // `null` is still a 400 (as POST /v1/keys).
      preValidation: (req, _reply, done) => {
        if (req.body == null && req.headers['content-type'] === undefined) (req as { body: unknown }).body = {};
        done();
      },
    },
    async (req, reply) =>
      reply.code(202).send(await requestReplay(infra, req.auth.developerId, req.params.callId, req.body)),
  );
  app.get(
    '/v1/calls/:callId/replays',
    {
      schema: {
        tags,
        summary: "A call's replays, newest first",
        params: CallIdParams,
        querystring: PageQuery,
        response: { 200: pageSchema(CallReplay) },
      },
    },
    async (req) => listReplays(infra, req.auth.developerId, req.params.callId, req.query),
  );
  app.get(
    '/v1/calls/:callId/replay/:replayId',
    {
      schema: {
        tags,
        summary: 'A call replay: its progress, then the per-turn diff (said, latency, interruptions, cut-ins)',
        params: CallReplayParams,
        response: { 200: CallReplay },
      },
    },
    async (req) => getReplay(infra, req.auth.developerId, req.params.callId, req.params.replayId),
  );
};
