import { catalog } from '../../../kernel/queue/catalog.ts';
import { entryState } from '../../../kernel/queue/entry-state.ts';
import type { Infra } from '../../../platform/infra.ts';
import { failOpenCallReplay, openCallReplays } from './store.ts';

export const REPLAY_STOPPED = 'The worker running this replay stopped before it finished; ask for the replay again.';

/**
 * Replays whose job is gone (the reconciler, every RECONCILE_INTERVAL_MS): a queued one whose queue entry was lost
 * goes back on the queue (nothing of it has run, and its job id is its own id); a running one whose job is no
 * longer running failed with its worker. It is not run again: its call may have been half placed.
 */
export async function reconcileCallReplays(infra: Infra): Promise<{ requeued: number; failed: number }> {
  const stats = { requeued: 0, failed: 0 };
  const q = infra.queues.get(catalog['call-replay.run'].queue);
  for (const r of await openCallReplays(infra.db, infra.config.RECONCILE_AFTER_MS)) {
    const { state } = await entryState(q, r.id);
    if (state === 'present') continue;
    if (r.status === 'queued' && state === 'lost') {
      await q.remove(r.id);
      await infra.queues.enqueue('call-replay.run', { replayId: r.id }, { jobId: r.id });
      stats.requeued++;
    } else if (await failOpenCallReplay(infra.db, r.id, REPLAY_STOPPED)) {
      stats.failed++;
    }
  }
  return stats;
}
