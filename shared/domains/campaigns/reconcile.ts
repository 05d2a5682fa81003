import { catalog } from '../../kernel/queue/catalog.ts';
import { entryState } from '../../kernel/queue/entry-state.ts';
import type { Infra } from '../../platform/infra.ts';
import { enqueueHangup, enqueueSettle } from './dispatcher.ts';
import { campaignsWithDueRecipients, endUndialed, undialedCalls, unsentHangups, unsettledCalls } from './store.ts';

/**
 * The reconciler's campaign part (Postgres is the source of truth; the queue may lose jobs):
 *  - attempts claimed but not dialled (the dispatcher or dialler died between claim and dial, or Redis lost the
 *    job) go back to the dialler, which looks the call up at Twilio before dialling again; one whose dialler
 *    died on it repeatedly is ended as failed;
 *  - hang-ups of a canceled campaign not yet sent (their job lost) are sent again;
 *  - ended attempts never settled get their settlement again;
 *  - every active campaign with a recipient due gets a dispatcher run (one per campaign and interval window,
 *    whichever replica adds it): retries whose back-off passed, calling hours that opened.
 */
export async function reconcileCampaigns(
  infra: Infra,
  now = Date.now(),
): Promise<{ dials: number; hangups: number; settles: number; dispatches: number }> {
  const after = infra.config.RECONCILE_AFTER_MS;
  const stats = { dials: 0, hangups: 0, settles: 0, dispatches: 0 };
  const q = infra.queues.get(catalog['campaign.dial'].queue);
  for (const callId of await undialedCalls(infra.db, after)) {
    const { state } = await entryState(q, callId);
    if (state === 'present') continue;
    if (state === 'dead') {
      if (await endUndialed(infra.db, callId, 'failed', 'the dialler stopped repeatedly'))
        await enqueueSettle(infra, callId);
      continue;
    }
    await q.remove(callId);
    await infra.queues.enqueue('campaign.dial', { callId }, { jobId: callId });
    stats.dials++;
  }
  for (const callId of await unsentHangups(infra.db, after)) {
    const jobId = `hangup-${callId}`;
    if ((await entryState(q, jobId)).state === 'present') continue;
    await q.remove(jobId);
    await enqueueHangup(infra, callId);
    stats.hangups++;
  }
  for (const callId of await unsettledCalls(infra.db, after)) {
    const jobId = `settle-${callId}`;
    if ((await entryState(q, jobId)).state === 'present') continue;
    await q.remove(jobId);
    await enqueueSettle(infra, callId);
    stats.settles++;
  }
  const window = Math.floor(now / infra.config.RECONCILE_INTERVAL_MS);
  for (const campaignId of await campaignsWithDueRecipients(infra.db)) {
    await infra.queues.enqueue('campaign.dispatch', { campaignId }, { jobId: `dispatch-${campaignId}-w${window}` });
    stats.dispatches++;
  }
  return stats;
}
