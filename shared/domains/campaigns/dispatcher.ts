import { withTransaction } from '../../kernel/db/pool.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import type { Infra } from '../../platform/infra.ts';
import { fleetHeadroom } from '../realtime/admission.ts';
import { sessionCap } from '../realtime/session-claim.ts';
import { createCall, listCalls } from '../../engines/telephony/twilio-rest.ts';
import { twilioAccount, updateLiveCall } from '../realtime/twilio-calls.ts';
import { campaignCallPath } from './paths.ts';
import { utcDayStart } from '../billing/spending-caps.ts';
import { enqueueFirstDelivery } from '../webhooks/delivery.ts';
import { insertWebhookMessage } from '../webhooks/outbox.ts';
import { campaignFunding, fundableNewCalls } from './funding.ts';
import {
  campaignForDispatch,
  claimDueRecipients,
  completeIfFinished,
  endUndialed,
  getDialTarget,
  getHangupTarget,
  knownCallSid,
  markDialing,
  markHangupSent,
  nextDueAt,
  recordDialed,
  setCampaignWaiting,
} from './store.ts';

/** The webhook sent once when a campaign starts waiting for money (issue #33). */
export const CAMPAIGN_PAUSED_EVENT = 'campaign.paused';

const FULL_RETRY_MS = 5000;
/** Twilio's own time limit on a call sits past the session's hard stop (its cap + 20 s goodbye grace). */
const TIME_LIMIT_MARGIN_SECONDS = 60;
/** Twilio's largest `TimeLimit` (4 hours, also its default). */
const TWILIO_MAX_TIME_LIMIT_SECONDS = 4 * 3600;

/**
 * The dispatcher (`campaign.dispatch`): claims as many due recipients as the campaign, the developer's session cap
 * and the fleet have free slots for (one transaction, see claimDueRecipients) and hands each attempt to its own
 * `campaign.dial` job (job id = attempt id, so a repeated enqueue is a no-op). When nobody is due yet it schedules
 * itself for the next retry time; when the fleet or the developer's cap is full, it looks again shortly (a slot
 * freed by another campaign or a call outside campaigns enqueues no dispatch of this one).
 */
export async function dispatchCampaign(infra: Infra, campaignId: string, log: Logger): Promise<number> {
  // Admission control: no dialling into a full fleet (the callee would answer to a refusal); look again shortly.
  const headroom = await fleetHeadroom(infra).catch(() => null);
  if (headroom !== null && headroom <= 0) {
    await lookAgainShortly(infra, campaignId, 'full');
    return 0;
  }
  const campaign = await campaignForDispatch(infra.db, campaignId);
  if (!campaign) return 0;
  // Paused, canceled or completed: nothing to dial, and no money look to schedule (resume dispatches again).
  if (campaign.status !== 'active') return 0;
  const developerId = campaign.developer_id;
  // Money before dialling: a callee must never answer a call the platform cannot pay for.
  const funding = await campaignFunding(infra, campaign);
  if (funding.waiting) {
    await waitForMoney(infra, campaign, funding.waiting, log);
    return 0;
  }
  if (campaign.waiting) await setCampaignWaiting(infra.db, campaignId, null);
  const developerCap = await sessionCap(infra, developerId);
  const { ids, limitedBy } = await claimDueRecipients(infra.db, campaignId, {
    fleetFree: headroom,
    developerCap,
    fundable: (tx) => fundableNewCalls(infra, campaign, tx),
  });
  for (const callId of ids) await infra.queues.enqueue('campaign.dial', { callId }, { jobId: callId });
  if (ids.length) log.info({ campaignId, claimed: ids.length, limitedBy }, 'campaign recipients claimed');
  if (limitedBy === 'developer' || limitedBy === 'fleet') {
    await lookAgainShortly(infra, campaignId, limitedBy === 'fleet' ? 'full' : 'cap');
    return ids.length;
  }
  if (!ids.length) {
    const at = await nextDueAt(infra.db, campaignId);
    const delay = at ? at.getTime() - Date.now() : 0;
    if (delay > 0)
      await infra.queues.enqueue(
        'campaign.dispatch',
        { campaignId },
        { jobId: `dispatch-${campaignId}-${at!.getTime()}`, delay },
      );
    await completeIfFinished(infra.db, campaignId);
  }
  return ids.length;
}

/**
 * The campaign waits for money: the reason is stored (the API shows it), one signed `campaign.paused` webhook goes
 * out per pause (through the outbox, in the same statement's wake), and the dispatcher looks again by itself: at
 * the next UTC day (a daily cap rolls over then) and on every reconciler pass (credits added, a cap raised).
 */
async function waitForMoney(
  infra: Infra,
  c: { id: string; developer_id: string; webhook_url: string | null },
  reason: 'daily_cap' | 'balance',
  log: Logger,
): Promise<void> {
  // The pause and its message in one transaction: a crash between them cannot lose the webhook.
  const messageId = await withTransaction(infra.db, async (tx) => {
    const paused = await setCampaignWaiting(tx, c.id, reason);
    if (!paused) return null;
    log.info({ campaignId: c.id, reason }, 'campaign waits: money cannot fund the next call');
    if (!c.webhook_url) return null;
    return insertWebhookMessage(tx, {
      developerId: c.developer_id,
      url: c.webhook_url,
      source: `campaign:${c.id}:paused:${paused.pausedAt.getTime()}`,
      type: CAMPAIGN_PAUSED_EVENT,
      data: { campaignId: c.id, reason, since: paused.pausedAt.toISOString() },
    });
  });
  if (messageId) await enqueueFirstDelivery(infra, messageId);
  const rollover = utcDayStart().getTime() + 24 * 3600 * 1000;
  await infra.queues.enqueue(
    'campaign.dispatch',
    { campaignId: c.id },
    { jobId: `dispatch-${c.id}-rollover-${rollover}`, delay: Math.max(0, rollover - Date.now()) },
  );
}

/** One dispatcher run FULL_RETRY_MS from now (one per campaign, reason and window, however many ask). */
async function lookAgainShortly(infra: Infra, campaignId: string, why: 'full' | 'cap'): Promise<void> {
  const slot = Math.floor(Date.now() / FULL_RETRY_MS);
  await infra.queues.enqueue(
    'campaign.dispatch',
    { campaignId },
    { jobId: `dispatch-${campaignId}-${why}-${slot}`, delay: FULL_RETRY_MS },
  );
}

/**
 * The dialler (`campaign.dial`): places one claimed attempt through Twilio's REST API, at most once.
 *  - `claimed` → `dialing` is written before the POST: from then on the call may exist at Twilio.
 *  - Found in `dialing` (a retried or stalled job, or the reconciler after a crash), it first asks Twilio for a
 *    call to that number created since the claim that is not another attempt's; if there is one, it is adopted.
 *  - A permanent refusal (a 4xx from Twilio) ends the attempt as failed; the settlement records the outcome.
 */
export async function dialCampaignCall(infra: Infra, callId: string, signal: AbortSignal, log: Logger): Promise<void> {
  const t = await getDialTarget(infra.db, callId);
  if (!t || t.call_sid) return;
  if (t.campaign_status === 'canceled') {
    if (await endUndialed(infra.db, callId, 'canceled', 'the campaign was canceled before the call was placed'))
      await enqueueSettle(infra, callId);
    return;
  }
  if (t.status === 'dialing') {
    // Newest first, kept from the claim on (less 2 s: Twilio's creation times are whole seconds on its clock).
    const placed = await listCalls(twilioAccount(infra), { to: t.to_number, from: t.from_number }, signal);
    for (const c of placed) {
      if (c.createdAt.getTime() < t.claimed_at.getTime() - 2000 || (await knownCallSid(infra.db, c.sid))) continue;
      if (await recordDialed(infra.db, callId, c.sid, c.status)) await enqueueHangup(infra, callId);
      log.info({ callId, callSid: c.sid }, 'campaign call found at twilio; not dialled again');
      return;
    }
  } else if (!(await markDialing(infra.db, callId))) return; // ended or dialled meanwhile
  const pub = infra.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const cap = Math.min(t.max_duration_seconds ?? Infinity, infra.config.REALTIME_MAX_SESSION_SECONDS);
  try {
    const call = await createCall(
      twilioAccount(infra),
      {
        to: t.to_number,
        from: t.from_number,
        url: pub + campaignCallPath(callId, 'connect'),
        statusCallback: pub + campaignCallPath(callId, 'status'),
        ringSeconds: infra.config.CAMPAIGN_RING_TIMEOUT_SECONDS,
        // A bound the lost-callback reconciliation can rely on: Twilio ends the call by then whatever happens.
        timeLimitSeconds: Math.min(cap + TIME_LIMIT_MARGIN_SECONDS, TWILIO_MAX_TIME_LIMIT_SECONDS),
      },
      signal,
    );
    // Canceled while the POST was under way: the cancel saw no CallSid to hang up, so it is hung up from here.
    if (await recordDialed(infra.db, callId, call.sid, call.status)) await enqueueHangup(infra, callId);
    log.info({ callId, callSid: call.sid }, 'campaign call placed');
  } catch (e) {
    if (e instanceof EngineError && !e.retryable) {
      const why = `twilio refused the call (${e.status ?? 'error'}): ${e.message}`.slice(0, 500);
      if (await endUndialed(infra.db, callId, 'failed', why)) await enqueueSettle(infra, callId);
      return;
    }
    throw e;
  }
}

/** Hangs up one attempt of a canceled campaign (`campaign.hangup`, job id `hangup-<attempt>`). */
export async function enqueueHangup(infra: Infra, callId: string): Promise<void> {
  await infra.queues.enqueue('campaign.hangup', { callId }, { jobId: `hangup-${callId}` });
}

/**
 * The hang-up (`campaign.hangup`): `Status=completed` on the live call through Twilio's REST API. Twilio then ends
 * the media stream (the realtime role ends the session with the attempt's hang-up reason) and sends the final
 * status, which settles the attempt as `canceled`. A call Twilio no longer has, or has ended (a 4xx), needs nothing;
 * a network error or 5xx retries (the job's backoff, then the reconciler).
 */
export async function hangUpCampaignCall(
  infra: Infra,
  callId: string,
  signal: AbortSignal,
  log: Logger,
): Promise<void> {
  const t = await getHangupTarget(infra.db, callId);
  if (!t?.call_sid || !t.hangup_reason || t.ended_at) return;
  try {
    await updateLiveCall(infra, t.call_sid, { status: 'completed' }, signal);
    log.info({ callId, callSid: t.call_sid, reason: t.hangup_reason }, 'campaign call hung up');
  } catch (e) {
    if (!(e instanceof EngineError) || e.retryable) throw e;
    log.warn({ callId, callSid: t.call_sid, err: e.message }, 'twilio refused the hang-up; the call is not live');
  }
  await markHangupSent(infra.db, callId);
}

/** The settlement of an ended attempt runs once per attempt (job id). */
export async function enqueueSettle(infra: Infra, callId: string): Promise<void> {
  await infra.queues.enqueue('campaign.settle', { callId }, { jobId: `settle-${callId}` });
}
