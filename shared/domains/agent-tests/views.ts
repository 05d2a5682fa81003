import type { TestRun, TestRunDetail } from '../../kernel/contracts/agent-tests.ts';
import type { TestRunRow } from './store.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A run as the API shows it in lists and webhooks: status and progress, no scenario bodies. */
export function toTestRun(r: Omit<TestRunRow, 'scenarios' | 'results'>): TestRun {
  return {
    id: r.id,
    agentId: r.agent_id,
    status: r.status,
    progress: { done: r.done, total: r.total },
    passed: r.passed,
    failed: r.failed,
    mode: r.mode,
    version: r.version,
    error: r.error,
    createdAt: r.created_at.toISOString(),
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
  };
}

/** A run with each scenario's result (null until it finishes). */
export function toTestRunDetail(r: TestRunRow): TestRunDetail {
  return {
    ...toTestRun(r),
    scenarios: r.scenarios.map((s) => ({ name: s.name })),
    results: r.results,
  };
}
