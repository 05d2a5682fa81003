import type { ScenarioResult, ScenarioResultView, TestRun, TestRunDetail } from '../../contracts/agent-tests.ts';
import { ifDate, ifSet } from '../../contracts/absent.ts';
import type { TestRunRow } from './store.ts';

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
    ...ifSet('version', r.version),
    ...ifSet('error', r.error),
    createdAt: r.created_at.toISOString(),
    ...ifDate('startedAt', r.started_at),
    ...ifDate('finishedAt', r.finished_at),
  };
}

/**
 * A stored scenario result with its unset strings left out. Results stored before backchannels were reported lack
 * their counts: none were said.
 */
function toResultView(r: ScenarioResult): ScenarioResultView {
  const { sessionId, endReason, error, recordingUrl, ...rest } = r;
  return {
    ...rest,
    backchannels: rest.backchannels ?? [],
    // Results stored before root causes were found have none.
    rootCause: (rest.rootCause as string[] | undefined) ?? [],
    turns: rest.turns.map((t) => ({
      ...t,
      backchannels: t.backchannels ?? 0,
      backchannelInterruptions: t.backchannelInterruptions ?? 0,
    })),
    // Results stored before runs could be metered carry no mode: they were offline.
    mode: (r.mode as ScenarioResult['mode'] | undefined) ?? 'offline',
    ...ifSet('sessionId', sessionId),
    ...ifSet('endReason', endReason),
    ...ifSet('error', error),
    ...ifSet('recordingUrl', recordingUrl),
  };
}

/** A run with each scenario's result (null until it finishes). */
export function toTestRunDetail(r: TestRunRow): TestRunDetail {
  return {
    ...toTestRun(r),
    scenarios: r.scenarios.map((s) => ({ name: s.name })),
    results: r.results.map((x) => (x ? toResultView(x) : null)),
  };
}
