import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  Agent,
  AgentInstance,
  AgentParams,
  ChatBody,
  ChatResponse,
  Conversation,
  ConversationParams,
  ConversationSummary,
  CreateAgentBody,
  CreateInstanceBody,
  InstanceParams,
  ProvisionBody,
  ProvisionResponse,
  SpeakBody,
  SyncBody,
  LlmProviderList,
  SyncResponse,
  ToolSigningSecret,
  UpdateAgentBody,
} from '../../shared/contracts/agents.ts';
import { PageQuery, pageSchema } from '../../shared/kernel/pagination.ts';
import { warmAgentLanguageModelById } from '../../shared/domains/agents/language-model.ts';
import {
  createAgent,
  createInstance,
  deleteAgent,
  deleteAgentInstance,
  getAgentInstance,
  listAgentInstances,
  listAgents,
  putAgent,
  requireAgent,
  revealToolSecret,
  rotateToolSecret,
} from '../services/agents.ts';
import { chatStream, chatWithAgent } from '../services/agents-chat.ts';
import { getAgentConversation, listAgentConversations } from '../services/agents-conversations.ts';
import { provisionAgent } from '../services/agents-provision.ts';
import { speakAsAgent } from '../services/agents-speak.ts';
import { syncAgent } from '../services/agents-sync.ts';
import { toAgent } from '../../shared/domains/agents/db.ts';
import { requireCoverableCallDuration } from '../../shared/domains/billing/session-hold.ts';
import { defaultLlmProvider, llmProviderInfo } from '../../shared/domains/agents/llm-providers.ts';

/** Routes of the agents area, registered at the root with their full /v1/... paths. */
export const agentsRoutes: FastifyPluginAsyncZod = async (app) => {
  const infra = app.infra;
  const { db, addressPolicy } = infra;
  const tags = ['Agents'];

  app.post(
    '/v1/agents',
    {
      schema: { tags, summary: 'Create an agent', body: CreateAgentBody, response: { 201: Agent } },
      config: {
        idempotent: true,
        idempotentSecrets: { fields: ['toolSigningSecret'], replay: 'redacted', resource: 'agent' },
      },
    },
    async (req, reply) => {
      const developerId = req.auth.developerId;
      requireCoverableCallDuration(infra.config, req.body.maxDurationSeconds, 'maxDurationSeconds');
      const llmProvider = req.body.llmProvider ?? (await defaultLlmProvider(infra, developerId));
      const agent = await createAgent(db, addressPolicy, developerId, { ...req.body, llmProvider });
      warmAgentLanguageModelById(infra, developerId, agent.id, infra.log);
      return reply.code(201).send(agent);
    },
  );

  app.get(
    '/v1/llm-providers',
    {
      schema: {
        tags,
        summary: 'LLM providers an agent may use, labelled, with where their keys come from (extension)',
        response: { 200: LlmProviderList },
      },
    },
    async (req) => ({ data: await llmProviderInfo(infra, req.auth.developerId) }),
  );

  app.get(
    '/v1/agents',
    {
      schema: { tags, summary: 'List active agents', querystring: PageQuery, response: { 200: pageSchema(Agent) } },
    },
    async (req) => listAgents(db, req.auth.developerId, req.query.limit, req.query.cursor),
  );

  app.post(
    '/v1/agents/provision',
    {
      schema: {
        tags,
        summary: 'Create an agent, its collection and initial content in one transaction',
        body: ProvisionBody,
        response: { 201: ProvisionResponse },
      },
      config: {
        idempotent: true,
        idempotentSecrets: { fields: ['agent.toolSigningSecret'], replay: 'redacted', resource: 'agent' },
      },
    },
    async (req, reply) => reply.code(201).send(await provisionAgent(infra, req, req.body)),
  );

  app.get(
    '/v1/agents/:id',
    { schema: { tags, summary: 'Get an agent', params: AgentParams, response: { 200: Agent } } },
    async (req) => toAgent(await requireAgent(db, req.auth.developerId, req.params.id)),
  );

  app.put(
    '/v1/agents/:id',
    {
      schema: {
        tags,
        summary: 'Update an agent',
        params: AgentParams,
        body: UpdateAgentBody,
        response: { 200: Agent },
      },
    },
    async (req) => {
      requireCoverableCallDuration(infra.config, req.body.maxDurationSeconds, 'maxDurationSeconds');
      const agent = await putAgent(db, addressPolicy, req.auth.developerId, req.params.id, req.body);
      warmAgentLanguageModelById(infra, req.auth.developerId, agent.id, infra.log);
      return agent;
    },
  );

  // The tool-signing secret is in the creation response only; these show it on an explicit request.
  app.get(
    '/v1/agents/:id/tool-signing-secret',
    {
      schema: {
        tags,
        summary: "Reveal the agent's tool-signing secret (Standard Webhooks)",
        params: AgentParams,
        response: { 200: ToolSigningSecret },
      },
    },
    async (req) => revealToolSecret(db, req.auth.developerId, req.params.id),
  );

  app.post(
    '/v1/agents/:id/tool-signing-secret/rotate',
    {
      schema: {
        tags,
        summary: "Replace the agent's tool-signing secret (the old one stops signing at once)",
        params: AgentParams,
        response: { 200: ToolSigningSecret },
      },
    },
    async (req) => rotateToolSecret(db, req.auth.developerId, req.params.id),
  );

  app.delete(
    '/v1/agents/:id',
    { schema: { tags, summary: 'Archive an agent', params: AgentParams } },
    async (req, reply) => {
      await deleteAgent(db, req.auth.developerId, req.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/agents/:id/chat',
    {
      schema: {
        tags,
        summary: 'Chat with an agent',
        params: AgentParams,
        body: ChatBody,
        response: { 200: ChatResponse },
      },
      config: { idempotent: true },
    },
    async (req, reply) => {
      if (!req.body.stream) return chatWithAgent(infra, req, req.params.id, req.body);
      const events = await chatStream(infra, req, req.params.id, req.body);
      // A stream is piped as-is (the 200 schema describes the JSON form); the typed reply only knows that one.
      return reply
        .type('text/event-stream')
        .header('cache-control', 'no-cache')
        .send(events as unknown as ChatResponse);
    },
  );

  app.post(
    '/v1/agents/:id/speak',
    {
      schema: { tags, summary: "Speak text in the agent's voice", params: AgentParams, body: SpeakBody },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const audio = await speakAsAgent(infra, req, req.params.id, req.body);
      return reply.type(audio.contentType).send(audio.body);
    },
  );

  app.post(
    '/v1/agents/:id/sync',
    {
      schema: {
        tags,
        summary: 'Push the agent configuration to an external voice-agent platform',
        params: AgentParams,
        body: SyncBody,
        response: { 200: SyncResponse },
      },
    },
    async (req) => {
      req.providerUsed = req.body.provider;
      return syncAgent(infra, req.auth.developerId, req.params.id, req.body.provider);
    },
  );

  // ── conversations (extension) ─────────────────────────────────────────────────────────────────────────────
  app.get(
    '/v1/agents/:id/conversations',
    {
      schema: {
        tags,
        summary: "List an agent's chat conversations",
        params: AgentParams,
        querystring: PageQuery,
        response: { 200: pageSchema(ConversationSummary) },
      },
    },
    async (req) => listAgentConversations(db, req.auth.developerId, req.params.id, req.query.limit, req.query.cursor),
  );

  app.get(
    '/v1/agents/:id/conversations/:conversationId',
    {
      schema: {
        tags,
        summary: 'Get a chat conversation with its turns',
        params: ConversationParams,
        response: { 200: Conversation },
      },
    },
    async (req) => getAgentConversation(db, req.auth.developerId, req.params.id, req.params.conversationId),
  );

  // ── instances (extension) ────────────────────────────────────────────────────────────────────────────────
  app.post(
    '/v1/agents/:id/instances',
    {
      schema: {
        tags,
        summary: 'Create an agent instance (personalised context)',
        params: AgentParams,
        body: CreateInstanceBody,
        response: { 201: AgentInstance },
      },
      config: { idempotent: true },
    },
    async (req, reply) => reply.code(201).send(await createInstance(db, req.auth.developerId, req.params.id, req.body)),
  );

  app.get(
    '/v1/agents/:id/instances',
    {
      schema: {
        tags,
        summary: 'List agent instances',
        params: AgentParams,
        querystring: PageQuery,
        response: { 200: pageSchema(AgentInstance) },
      },
    },
    async (req) => listAgentInstances(db, req.auth.developerId, req.params.id, req.query.limit, req.query.cursor),
  );

  app.get(
    '/v1/agents/:id/instances/:instanceId',
    { schema: { tags, summary: 'Get an agent instance', params: InstanceParams, response: { 200: AgentInstance } } },
    async (req) => getAgentInstance(db, req.auth.developerId, req.params.id, req.params.instanceId),
  );

  app.delete(
    '/v1/agents/:id/instances/:instanceId',
    { schema: { tags, summary: 'Delete an agent instance', params: InstanceParams } },
    async (req, reply) => {
      await deleteAgentInstance(db, req.auth.developerId, req.params.id, req.params.instanceId);
      return reply.code(204).send();
    },
  );
};
