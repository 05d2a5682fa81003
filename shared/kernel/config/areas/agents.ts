import { z } from 'zod';
import { envInt } from '../env.ts';

/** Environment variables of the agents area (merged into EnvSchema; documented in docs/agents.md). */
export const agentsEnv = {
  AGENT_HISTORY_TURNS: envInt(0, 500)
    .default(50)
    .describe('Earlier turns of a chat conversation sent to the model with each message (all turns stay stored).'),
  AGENT_TURN_TIMEOUT_MS: envInt(1000, 600_000)
    .default(120_000)
    .describe('Upper bound on one chat turn (every LLM step and tool call together); past it the turn fails with 504.'),
  AGENT_TESTS_MAX_PARALLEL: envInt(1, 32)
    .default(2)
    .describe(
      'Scenarios of one agent test run played at once by a CPU worker (docs/agent-tests.md); each runs on its own ' +
        'private api + realtime pair, one call at a time, so this many calls and platforms share the worker.',
    ),
  AGENT_TESTS_IN_FLIGHT_PER_DEVELOPER: z
    .string()
    .regex(/^(\w+:\d+)(,\w+:\d+)*$/)
    .default('starter:2,pro:4,scale:8')
    .describe(
      'Agent test runs and call replays one developer may have queued or running at once, by tier (tier:count,…); ' +
        'one more is 429 test_runs_in_flight_limited at creation (docs/agent-tests.md, "Limits").',
    ),
  AGENT_TESTS_MAX_CALL_MINUTES: envInt(1, 24 * 60)
    .default(120)
    .describe(
      "Cap on one agent test run's call time, in minutes: a run whose scenarios' call budget (turns, silences and " +
        'speech, docs/agent-tests.md) is above it is refused with 400, and a run whose calls pass it ends as error.',
    ),
} satisfies z.ZodRawShape;
