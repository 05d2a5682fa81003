import { parentPort, workerData } from 'node:worker_threads';
import { evaluate } from '../../shared/domains/agent-tests/evaluate.ts';
import { argumentProblem } from '../../shared/domains/agents/tools/tool-schema.ts';
import type { Scenario } from '../../shared/contracts/agent-tests.ts';

/**
 * Runs a tenant pattern on a thread of its own (hostile-input.test.ts), so a pattern that backtracks for hours
 * blocks this thread, which the test can terminate, rather than the test runner: a scenario's evaluate(), or a
 * tool's arguments checked against its parameters' schema.
 */
type Job =
  | { kind: 'evaluate'; scenario: Scenario; reply: string }
  | { kind: 'toolArguments'; schema: Record<string, unknown>; args: unknown };

const job = workerData as Job;
if (job.kind === 'toolArguments') {
  parentPort!.postMessage({ problem: argumentProblem(job.schema, job.args) });
} else {
  const detail = {
    startedAt: new Date(0).toISOString(),
    endReason: 'caller-hangup',
    turns: [
      { speaker: 'user', text: 'hello', startMs: 0 },
      { speaker: 'assistant', text: job.reply, startMs: 100 },
    ],
    toolExecutions: [],
  };
  const out = evaluate(job.scenario, { turnStartsWall: [0], latencies: [50], cutIns: [false] }, detail, {
    costCredits: 0,
    endReason: 'caller-hangup',
    error: null,
  });
  parentPort!.postMessage(out);
}
