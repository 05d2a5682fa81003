import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AgentParams, AgentVersion, AgentVersionParams } from '../../shared/contracts/agents.ts';
import { PageQuery, pageSchema } from '../../shared/kernel/pagination.ts';
import { getVersion, listVersions } from '../services/agent-versions.ts';

const tags = ['Agents'];

/** Agent versions (issue 21): every configuration an agent has had, immutable and numbered. */
export const agentVersionsRoutes: FastifyPluginAsyncZod = async (app) => {
  const { db } = app.infra;
  app.get(
    '/v1/agents/:id/versions',
    {
      schema: {
        tags,
        summary: "List an agent's configuration versions, newest first (extension)",
        params: AgentParams,
        querystring: PageQuery,
        response: { 200: pageSchema(AgentVersion) },
      },
    },
    async (req) => listVersions(db, req.auth.developerId, req.params.id, req.query.limit, req.query.cursor),
  );
  app.get(
    '/v1/agents/:id/versions/:version',
    {
      schema: {
        tags,
        summary: 'One configuration version of an agent (extension)',
        params: AgentVersionParams,
        response: { 200: AgentVersion },
      },
    },
    async (req) => getVersion(db, req.auth.developerId, req.params.id, req.params.version),
  );
};
