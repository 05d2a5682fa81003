import { EngineError } from '../../kernel/errors/engine-error.ts';
import { catalog } from '../../kernel/queue/catalog.ts';
import { entryState } from '../../kernel/queue/entry-state.ts';
import { enqueueUnlessQueued } from '../../kernel/queue/enqueue-unless-queued.ts';
import { getCall } from '../../engines/telephony/twilio-rest.ts';
import type { Infra } from '../../platform/infra.ts';
import { twilioAccount, updateLiveCall } from '../realtime/twilio-calls.ts';
import { enqueueHangup, enqueueSettle } from './dispatcher.ts';
import {
  campaignsWithDueRecipients,
  deadSessionCalls,
  endUndialed,
  FINAL_STATUSES,
  overdueLiveCalls,
  recordCallStatus,
  undialedCalls,
  unsentHangups,
  unsettledCalls,
} from './store.ts';

/** One look-up at Twilio per overdue call and pass; a slow API must not hold the reconciler. */
const LOOKUP_TIMEOUT_MS = 10_000;

/**
 * The reconciler's campaign part (Postgres is the source of truth; the queue may lose jobs, Twilio may lose a
 * callback):
 *  - attempts claimed but not dialled (the dispatcher or dialler died between claim and dial, or Redis lost the
 *    job) go back to the dialler, which looks the call up at Twilio before dialling again; one whose dialler
 *    died on it repeatedly is ended as failed;
 *  - hang-ups of a canceled campaign not yet sent (their job lost) are sent again;
 *  - calls whose session died (lost with a crashed realtime role, or ended while Twilio's final callback reached
 *    no one) are looked up at Twilio at once and settled (settleDeadSessionCalls);
 *  - calls dialled and not ended past ring timeout + their maximum duration + margin (their final status callback
 *    was lost: they would hold a concurrency slot forever) are looked up at Twilio and settled from its status;
 *  - ended attempts never settled get their settlement again;
 *  - every active campaign with a recipient due gets a dispatcher run unless one is already queued for it (one job
 *    id per campaign, whichever replica adds it): retries whose back-off passed, calling hours that opened.
 */
export async function reconcileCampaigns(
  infra: Infra,
): Promise<{ dials: number; hangups: number; dead: number; overdue: number; settles: number; dispatches: number }> {
  const after = infra.config.RECONCILE_AFTER_MS;
  const stats = { dials: 0, hangups: 0, dead: 0, overdue: 0, settles: 0, dispatches: 0 };
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
  stats.dead = await settleDeadSessionCalls(infra);
  stats.overdue = await settleOverdueCalls(infra);
  for (const callId of await unsettledCalls(infra.db, after)) {
    const jobId = `settle-${callId}`;
    if ((await entryState(q, jobId)).state === 'present') continue;
    await q.remove(jobId);
    await enqueueSettle(infra, callId);
    stats.settles++;
  }
  // One reconciler dispatch per campaign at a time: a job id per pass window added one more every pass while the
  // queue was busy (192 waiting jobs behind two test runs); a campaign whose dispatch still waits gets none.
  for (const campaignId of await campaignsWithDueRecipients(infra.db)) {
    if (
      await enqueueUnlessQueued(infra.queues, 'campaign.dispatch', { campaignId }, `dispatch-${campaignId}-reconcile`)
    )
      stats.dispatches++;
  }
  return stats;
}

/** A session ended this long ago, its attempt still without a final status: the callback is not coming. */
const ENDED_GRACE_SECONDS = 10;
/**
 * A running session untouched this long died with its process: three missed heartbeats of the realtime keeper
 * (every 15 s), before the keeper's own four (it marks the session lost), so Twilio is asked a little sooner.
 */
const STALE_SESSION_SECONDS = 45;
/** An attempt that never got a session this long after ring timeout: its connect callback reached no one. */
const UNCONNECTED_MARGIN_SECONDS = 60;

/**
 * Calls whose final status callback never came: Twilio is asked (GET Calls/{Sid}.json). A final status there is
 * recorded as the callback would have been, and settles the attempt (its slot frees, the next recipient is
 * dialled). A call Twilio still reports live is left (asked again next pass); one Twilio does not know (404) is
 * failed. When Twilio cannot be asked (network, 5xx, credentials), the attempt is failed with the reason only past
 * the longer bound (CAMPAIGN_STATUS_GIVE_UP_SECONDS), so a short Twilio outage does not fail calls that went well.
 */
async function settleOverdueCalls(infra: Infra): Promise<number> {
  const c = infra.config;
  const overdue = await overdueLiveCalls(infra.db, {
    ringSeconds: c.CAMPAIGN_RING_TIMEOUT_SECONDS,
    maxSessionSeconds: c.REALTIME_MAX_SESSION_SECONDS,
    marginSeconds: c.CAMPAIGN_STATUS_MARGIN_SECONDS,
    giveUpSeconds: c.CAMPAIGN_STATUS_GIVE_UP_SECONDS,
  });
  let settled = 0;
  for (const k of overdue) {
    if ((await settleFromTwilio(infra, k, { giveUp: k.give_up })) === 'settled') settled++;
  }
  return settled;
}

/**
 * Attempts whose session died (the realtime role crashed with the call, or its session ended while Twilio's final
 * callback reached no one) are looked up at Twilio at once, not after ring + maximum duration + margin (≈ 66 min
 * by default): every pass, the first one right after a (re)start included, so their slots free within about a
 * minute. A final status settles the attempt. A call Twilio still has live while its session has ended is hung
 * up (nobody is on it: the callee would hear silence), and settled from its final status next pass. A call whose
 * session only looks stale is never hung up: only a final status at Twilio settles it.
 */
async function settleDeadSessionCalls(infra: Infra): Promise<number> {
  const dead = await deadSessionCalls(infra.db, {
    endedGraceSeconds: ENDED_GRACE_SECONDS,
    staleSeconds: STALE_SESSION_SECONDS,
    unconnectedSeconds: infra.config.CAMPAIGN_RING_TIMEOUT_SECONDS + UNCONNECTED_MARGIN_SECONDS,
  });
  let settled = 0;
  for (const k of dead) {
    const r = await settleFromTwilio(infra, k, { giveUp: false });
    if (r === 'settled') settled++;
    else if (r === 'live' && k.ended) {
      await updateLiveCall(infra, k.call_sid, { status: 'completed' }, AbortSignal.timeout(LOOKUP_TIMEOUT_MS)).catch(
        (e: Error) => infra.log.warn({ callId: k.id, err: e.message }, 'orphaned campaign call: hang-up failed'),
      );
      infra.log.warn({ callId: k.id }, 'campaign call live at twilio after its session ended; hung up');
    }
  }
  return settled;
}

/**
 * Asks Twilio for one attempt's call and records a final status as its callback would have (then the settlement).
 * `live`: Twilio has the call still going; `unknown`: Twilio could not be asked (retried next pass, or failed
 * when `giveUp`).
 */
async function settleFromTwilio(
  infra: Infra,
  k: { id: string; call_sid: string },
  o: { giveUp: boolean },
): Promise<'settled' | 'live' | 'unknown'> {
  let u: { status: string; answeredBy: string | null; error: string | null } | null = null;
  try {
    const call = await getCall(twilioAccount(infra), k.call_sid, AbortSignal.timeout(LOOKUP_TIMEOUT_MS));
    if (!FINAL_STATUSES.includes(call.status)) return 'live';
    u = {
      status: call.status,
      answeredBy: call.answeredBy,
      error: call.status === 'failed' ? 'twilio reports the call failed (its status callback never came)' : null,
    };
  } catch (e) {
    const msg = (e as Error).message.slice(0, 300);
    if (e instanceof EngineError && e.status === 404)
      u = { status: 'failed', answeredBy: null, error: `twilio has no record of the call: ${msg}` };
    else if (o.giveUp)
      u = {
        status: 'failed',
        answeredBy: null,
        error: `the final status callback never came and twilio could not be asked: ${msg}`,
      };
    else {
      infra.log.warn({ callId: k.id, err: msg }, 'campaign call: twilio lookup failed; retrying');
      return 'unknown';
    }
  }
  if (!(await recordCallStatus(infra.db, k.id, { ...u, callSid: k.call_sid }))) return 'unknown';
  infra.log.warn({ callId: k.id, status: u.status }, 'campaign call settled without its final status callback');
  await enqueueSettle(infra, k.id);
  return 'settled';
}
