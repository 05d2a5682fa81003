import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { acceptTwilioForms, TwilioForm } from './twilio-form.ts';
import {
  CallIdParams,
  Campaign,
  CampaignDetail,
  CampaignIdParams,
  CreateCampaignBody,
} from '../../shared/contracts/campaigns.ts';
import { PageQuery, pageSchema } from '../../shared/kernel/pagination.ts';
import {
  campaignCallConnect,
  campaignCallStatus,
  changeCampaign,
  createCampaign,
  getCampaignDetail,
  listCampaignPage,
} from '../services/campaigns.ts';

/** Outbound calling campaigns (docs/campaigns.md) and the Twilio callbacks of their calls. */
export const campaignsRoutes: FastifyPluginAsyncZod = async (app) => {
  const infra = app.infra;
  acceptTwilioForms(app);
  const tags = ['Campaigns'];

  app.post(
    '/v1/campaigns',
    {
      schema: {
        tags,
        summary: 'Start an outbound calling campaign: an agent calls a list of recipients',
        body: CreateCampaignBody,
        response: { 201: Campaign },
      },
      config: { idempotent: true },
    },
    async (req, reply) =>
      reply.code(201).send(await createCampaign(infra, req.auth.developerId, req.body, req.auth.keyId)),
  );

  app.get(
    '/v1/campaigns',
    {
      schema: {
        tags,
        summary: 'List campaigns, newest first',
        querystring: PageQuery,
        response: { 200: pageSchema(Campaign) },
      },
    },
    async (req) => listCampaignPage(infra, req.auth.developerId, req.query),
  );

  app.get(
    '/v1/campaigns/:id',
    {
      schema: {
        tags,
        summary: "A campaign with each recipient's outcome and attempts",
        params: CampaignIdParams,
        response: { 200: CampaignDetail },
      },
    },
    async (req) => getCampaignDetail(infra, req.auth.developerId, req.params.id),
  );

  for (const action of ['pause', 'resume', 'cancel'] as const) {
    app.post(
      `/v1/campaigns/:id/${action}`,
      {
        schema: {
          tags,
          summary: `${action[0]!.toUpperCase()}${action.slice(1)} a campaign`,
          params: CampaignIdParams,
          response: { 200: Campaign },
        },
      },
      async (req) => changeCampaign(infra, req.auth.developerId, req.params.id, action),
    );
  }

  // Twilio's callbacks for campaign calls: signed by Twilio (X-Twilio-Signature), not by an API key.
  app.post(
    '/v1/campaigns/calls/:callId/connect',
    { schema: { hide: true, params: CallIdParams, body: TwilioForm }, config: { public: true } },
    async (req, reply) => {
      const sig = req.headers['x-twilio-signature'] as string | undefined;
      const twiml = await campaignCallConnect(infra, req.params.callId, sig, req.body);
      return reply.type('text/xml').send(twiml);
    },
  );
  app.post(
    '/v1/campaigns/calls/:callId/status',
    { schema: { hide: true, params: CallIdParams, body: TwilioForm }, config: { public: true } },
    async (req, reply) => {
      const sig = req.headers['x-twilio-signature'] as string | undefined;
      await campaignCallStatus(infra, req.params.callId, sig, req.body);
      return reply.code(204).send();
    },
  );
};
