import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scenarioJsonSchema } from '../../shared/kernel/contracts/agent-tests.ts';

const tags = ['Agents'];

/** Agent tests (issue #21): the scenario file format as JSON Schema, for editors and CI linters. */
export const agentTestsRoutes: FastifyPluginAsyncZod = async (app) => {
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
};
