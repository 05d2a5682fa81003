import { catalog } from '../../kernel/queue/catalog.ts';
import { entryState } from '../../kernel/queue/entry-state.ts';
import type { Infra } from '../../platform/infra.ts';
import { finishTestRunWithWebhook } from './execute.ts';
import { openTestRuns } from './store.ts';

/**
 * Open test runs whose job is gone (Redis lost it) go back on the queue (job id = run id, so this is idempotent);
 * one whose job failed for good (its worker died on it, or every attempt failed) ends as `error` with the reason,
 * instead of staying `running` for ever. Its finished scenarios keep their results.
 */
export async function reconcileTestRuns(infra: Infra): Promise<{ requeued: number; ended: number }> {
  const stats = { requeued: 0, ended: 0 };
  const q = infra.queues.get(catalog['agent-tests.run'].queue);
  for (const runId of await openTestRuns(infra.db, infra.config.RECONCILE_AFTER_MS)) {
    const { state, reason } = await entryState(q, runId);
    if (state === 'present') continue;
    if (state === 'lost') {
      await q.remove(runId);
      await infra.queues.enqueue('agent-tests.run', { runId }, { jobId: runId });
      stats.requeued++;
      continue;
    }
    await finishTestRunWithWebhook(
      infra,
      runId,
      `the worker running this test stopped repeatedly${reason ? ` (${reason})` : ''}; start the run again`,
    );
    stats.ended++;
  }
  return stats;
}
