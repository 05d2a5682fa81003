import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  AgentTestParams,
  CreateTestRunBody,
  scenarioJsonSchema,
  TestRun,
  TestRunDetail,
  TestRunParams,
} from '../../shared/contracts/agent-tests.ts';
import { PageQuery, pageSchema } from '../../shared/kernel/pagination.ts';
import { createTestRun, getTestRunDetail, listTestRunPage } from '../services/agent-tests.ts';

const tags = ['Agents'];

/** Agent tests (issue #21, docs/agent-tests.md): the scenario format, and runs of scenarios against an agent. */
export const agentTestsRoutes: FastifyPluginAsyncZod = async (app) => {
  const infra = app.infra;
  // Built once: the schema is a constant of this build.
  const schema = scenarioJsonSchema();
  app.get(
    '/v1/agent-tests/schema',
    {
      schema: {
        tags,
        summary: 'JSON Schema of an agent test scenario file (YAML or JSON)',
        response: { 200: z.record(z.string(), z.unknown()) },
      },
    },
    async () => schema,
  );

  app.post(
    '/v1/agents/:id/tests',
    {
      schema: {
        tags,
        summary: 'Run test scenarios against the agent (asynchronous: poll the run for progress and results)',
        description:
          'Each scenario is played as a phone call through the real media-stream path by a flite-voiced caller, ' +
          'offline: a scripted LLM (llm.replies) and a simulated STT answer instead of vendors, at no cost. No ' +
          'number is dialled. `scenarios` is a list of scenario objects or the text of a scenario file.',
        params: AgentTestParams,
        body: CreateTestRunBody,
        response: { 202: TestRun },
      },
      config: { idempotent: true },
    },
    async (req, reply) =>
      reply.code(202).send(await createTestRun(infra, req.auth.developerId, req.params.id, req.body)),
  );

  app.get(
    '/v1/agents/:id/tests',
    {
      schema: {
        tags,
        summary: "List the agent's test runs, newest first",
        params: AgentTestParams,
        querystring: PageQuery,
        response: { 200: pageSchema(TestRun) },
      },
    },
    async (req) => listTestRunPage(infra, req.auth.developerId, req.params.id, req.query),
  );

  app.get(
    '/v1/agent-tests/runs/:runId',
    {
      schema: {
        tags,
        summary: 'A test run: status, progress and each scenario’s result',
        description:
          'Per scenario and per turn: each expectation with why it failed (or what was seen), both sides of the ' +
          'transcript, the call recording (both legs), the latency waterfall, suspected cut-ins and the cost.',
        params: TestRunParams,
        response: { 200: TestRunDetail },
      },
    },
    async (req) => getTestRunDetail(infra, req.auth.developerId, req.params.runId),
  );
};
