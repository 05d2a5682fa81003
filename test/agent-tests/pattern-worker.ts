import { parentPort, workerData } from 'node:worker_threads';
import { evaluate } from '../../shared/domains/agent-tests/evaluate.ts';
import type { Scenario } from '../../shared/kernel/contracts/agent-tests.ts';

/**
 * Runs evaluate() on a thread of its own (hostile-input.test.ts), so a pattern that backtracks for hours blocks
 * this thread, which the test can terminate, rather than the test runner.
 */
const { scenario, reply } = workerData as { scenario: Scenario; reply: string };
const detail = {
  startedAt: new Date(0).toISOString(),
  endReason: 'caller_hangup',
  turns: [
    { speaker: 'user', text: 'hello', startMs: 0 },
    { speaker: 'assistant', text: reply, startMs: 100 },
  ],
  toolExecutions: [],
};
const out = evaluate(scenario, { turnStartsWall: [0], latencies: [50], cutIns: [false] }, detail, {
  costCredits: 0,
  endReason: 'caller_hangup',
  error: null,
});
parentPort!.postMessage(out);
