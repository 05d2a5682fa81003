import { ifDate, ifSet } from '../../shared/contracts/absent.ts';
import { campaignCallPath } from '../../shared/domains/campaigns/paths.ts';
import { enqueueHangup, enqueueSettle } from '../../shared/domains/campaigns/dispatcher.ts';
import {
  campaignCounts,
  getCampaign,
  getConnectTarget,
  attachCallSession,
  markRefused,
  insertCampaign,
  listCampaigns,
  listRecipients,
  recordCallStatus,
  setCampaignStatus,
  type CampaignCounts,
  type CampaignRow,
} from '../../shared/domains/campaigns/store.ts';
import type { Campaign, CampaignRecipient, CallOutcome, CreateCampaignBody } from '../../shared/contracts/campaigns.ts';
import { ApiError, isApiError } from '../../shared/kernel/errors/api-error.ts';
import { decodeCursor, toPage, type Page, type PageQuery } from '../../shared/kernel/pagination.ts';
import { twilioAccount } from '../../shared/domains/realtime/twilio-calls.ts';
import { requireCoverableCallCap, requireCoverableCallDuration } from '../../shared/domains/billing/session-hold.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import type { Voicemail } from '../../shared/contracts/agents.ts';
import { campaignCallCredits } from '../../shared/domains/campaigns/funding.ts';
import type { CreateTwilioSessionBody } from '../../shared/contracts/sessions.ts';
import { answerAgain, verifyTwilioSignature } from './sessions-outbound.ts';
import { refusalTwiml } from '../../shared/domains/realtime/admission.ts';
import { deletePendingSession } from '../../shared/domains/realtime/sessions.ts';
import { createTwilioSession, requireActiveAgent } from './sessions.ts';
import { precheckUrl } from '../../shared/domains/video/url-check.ts';

function toCampaign(r: CampaignRow, counts: CampaignCounts | undefined): Campaign {
  return {
    id: r.id,
    agentId: r.agent_id,
    ...ifSet('name', r.name),
    from: r.from_number,
    status: r.status,
    maxConcurrency: r.max_concurrency,
    callingHours: { start: r.hours_start, end: r.hours_end },
    timeZone: r.time_zone,
    retry: { maxAttempts: r.retry_max_attempts, backoff: r.retry_backoff_seconds, on: r.retry_on },
    maxDurationSeconds: r.max_duration_seconds,
    maxCredits: r.max_credits === null ? null : Number(r.max_credits),
    ...ifSet('webhookUrl', r.webhook_url),
    counts: counts ?? { total: 0, pending: 0, calling: 0, done: 0, outcomes: {} },
    ...ifSet('waiting', r.status === 'active' ? r.waiting : null),
    createdAt: r.created_at.toISOString(),
    ...ifDate('completedAt', r.completed_at),
  };
}

/** POST /v1/campaigns: stored (campaign and every recipient in one transaction), then the dispatcher is queued. */
export async function createCampaign(
  infra: Infra,
  developerId: string,
  body: CreateCampaignBody,
  apiKeyId: string | null = null,
): Promise<Campaign> {
  twilioAccount(infra); // 503 feature_not_configured before anything is stored
  requireCoverableCallCap(infra.config, body.maxCredits, 'maxCredits');
  requireCoverableCallDuration(infra.config, body.maxDurationSeconds, 'maxDurationSeconds');
  const agent = await requireActiveAgent(infra, developerId, body.agentId);
  requireCampaignCallCap(infra, body.maxCredits, agent.voicemail);
  // The delivery's own address policy, now: a private or non-http(s) URL is a 400, not a failed delivery later.
  if (body.webhookUrl !== undefined)
    await precheckUrl(body.webhookUrl, infra.addressPolicy, 'webhookUrl', { allowUnresolved: true });
  const id = await insertCampaign(infra.db, {
    developerId,
    agentId: body.agentId,
    name: body.name ?? null,
    from: body.from,
    maxConcurrency: body.maxConcurrency,
    hours: body.callingHours,
    timeZone: body.timeZone,
    retry: body.retry,
    maxDurationSeconds: body.maxDurationSeconds ?? null,
    maxCredits: body.maxCredits ?? null,
    webhookUrl: body.webhookUrl ?? null,
    apiKeyId,
    recipients: body.recipients.map((r) => ({ phone: r.phone, variables: r.variables, timeZone: r.timeZone ?? null })),
  });
  // A lost enqueue is covered: the reconciler dispatches every active campaign with a recipient due.
  await infra.queues.enqueue('campaign.dispatch', { campaignId: id });
  return getCampaignSummary(infra, developerId, id);
}

/**
 * 400 when the per-call cap cannot fund a call's first minute plus the agent's voicemail message: every call would
 * be cut before the end of its message (the dispatcher checks balance and daily caps the same way, per call).
 */
function requireCampaignCallCap(infra: Infra, maxCredits: number | undefined, voicemail: Voicemail | null): void {
  const needed = campaignCallCredits(infra.config, voicemail);
  if (maxCredits !== undefined && maxCredits < needed)
    throw ApiError.validation(
      `maxCredits must be at least ${needed}: a call is charged its first connected minute, and the agent's ` +
        'voicemail message must fit whole; raise the cap or shorten the message.',
      'maxCredits',
    );
}

async function requireCampaign(infra: Infra, developerId: string, id: string): Promise<CampaignRow> {
  const c = await getCampaign(infra.db, developerId, id);
  if (!c) throw ApiError.notFound('campaign', id);
  return c;
}

export async function getCampaignSummary(infra: Infra, developerId: string, id: string): Promise<Campaign> {
  const c = await requireCampaign(infra, developerId, id);
  return toCampaign(c, (await campaignCounts(infra.db, [id])).get(id));
}

/** GET /v1/campaigns/:id: the campaign, and each recipient with its outcome and every attempt. */
export async function getCampaignDetail(infra: Infra, developerId: string, id: string) {
  const c = await requireCampaign(infra, developerId, id);
  const [counts, { recipients, calls }] = await Promise.all([
    campaignCounts(infra.db, [id]),
    listRecipients(infra.db, id),
  ]);
  const byRecipient = new Map<string, typeof calls>();
  for (const k of calls) byRecipient.set(k.recipient_id, [...(byRecipient.get(k.recipient_id) ?? []), k]);
  const out: CampaignRecipient[] = recipients.map((r) => {
    const attempts = byRecipient.get(r.id) ?? [];
    return {
      id: r.id,
      phone: r.phone,
      variables: r.variables,
      ...ifSet('timeZone', r.time_zone),
      state: r.state,
      ...ifSet('outcome', r.outcome as CallOutcome | null),
      ...ifSet('outcomeReason', r.outcome_reason),
      ...ifSet('answeredBy', attempts.at(-1)?.answered_by),
      ...ifDate('nextAttemptAt', r.state === 'pending' ? r.next_attempt_at : null),
      ...ifSet('waiting', r.state === 'pending' && c.status === 'active' ? c.waiting : null),
      attempts: attempts.map((k) => ({
        id: k.id,
        attempt: k.attempt,
        status: k.status,
        ...ifSet('callSid', k.call_sid),
        ...ifSet('sessionId', k.session_id),
        ...ifSet('answeredBy', k.answered_by),
        ...ifSet('outcome', k.outcome as CallOutcome | null),
        ...ifSet('endReason', k.end_reason),
        ...ifSet('error', k.error),
        startedAt: k.claimed_at.toISOString(),
        ...ifDate('endedAt', k.ended_at),
      })),
    };
  });
  return { ...toCampaign(c, counts.get(id)), recipients: out };
}

export async function listCampaignPage(infra: Infra, developerId: string, q: PageQuery): Promise<Page<Campaign>> {
  const rows = await listCampaigns(infra.db, developerId, { after: decodeCursor(q.cursor), limit: q.limit });
  const counts = await campaignCounts(
    infra.db,
    rows.map((r) => r.id),
  );
  return toPage(rows, q.limit, (r) => toCampaign(r, counts.get(r.id)));
}

const TRANSITIONS = {
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
  cancel: { from: ['active', 'paused'], to: 'canceled' },
} as const;

/**
 * Pause (no new calls; calls in progress finish), resume, cancel (pending recipients end as `canceled`; calls in
 * progress are hung up through Twilio's REST API, their sessions end `campaign-canceled` and their recipients
 * `canceled`). 409 from a state that does not allow it.
 */
export async function changeCampaign(
  infra: Infra,
  developerId: string,
  id: string,
  action: keyof typeof TRANSITIONS,
): Promise<Campaign> {
  const c = await requireCampaign(infra, developerId, id);
  const t = TRANSITIONS[action];
  if (c.status !== t.to) {
    const changed = await setCampaignStatus(infra.db, developerId, id, [...t.from], t.to);
    if (!changed) throw new ApiError('conflict', { detail: `A ${c.status} campaign cannot be ${action}d.` }, 'status');
    // A lost enqueue is covered: the reconciler sends the hang-ups still unsent.
    for (const callId of changed.hangUp) await enqueueHangup(infra, callId);
  }
  if (action === 'resume') await infra.queues.enqueue('campaign.dispatch', { campaignId: id });
  return getCampaignSummary(infra, developerId, id);
}

// ---- Twilio callbacks (signed with X-Twilio-Signature) ----

const REFUSED_BECAUSE = {
  capacity: 'the realtime fleet was at capacity when the call connected',
  balance: 'the balance could not fund the first minute when the call connected',
  daily_cap: 'the daily spending cap could not fund the first minute when the call connected',
} as const;

const HANGUP = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>';

/**
 * The callee answered: a session for the campaign's agent with this recipient's variables (by the attempt id).
 * Idempotent per attempt: a replayed or retried callback answers the session the first one opened (answerAgain),
 * never a second one. When the platform cannot take the call (the developer's session cap is full, or the fleet
 * is), the callee hears the operator's short message (REALTIME_ADMISSION_MESSAGE) and the attempt is marked to be
 * re-queued rather than failed (settle.ts); a replay of that callback answers the same refusal.
 */
export async function campaignCallConnect(
  infra: Infra,
  callId: string,
  signature: string | undefined,
  params: Record<string, string>,
): Promise<string> {
  verifyTwilioSignature(infra, signature, campaignCallPath(callId, 'connect'), params);
  const t = await getConnectTarget(infra.db, callId);
  if (!t) throw ApiError.notFound('call', callId);
  const callSid = params.CallSid ?? null;
  if (t.requeue_reason) return refusalTwiml(infra.config, { answered: true });
  if (t.session_id) return answerAgain(infra, t, callSid);
  // The per-call limits travel in the session-create body (their enforcement is the session's).
  const limits = {
    ...(t.max_duration_seconds ? { maxDurationSeconds: t.max_duration_seconds } : {}),
    ...(t.max_credits ? { maxCredits: Number(t.max_credits) } : {}),
  };
  // The campaign's webhook receives the call's own events too (call.analyzed).
  const hook = t.webhook_url ? { webhookUrl: t.webhook_url } : {};
  const body = {
    agentId: t.agent_id,
    from: t.from_number,
    to: t.to_number,
    ...limits,
    ...hook,
  } as CreateTwilioSessionBody;
  try {
    const s = await createTwilioSession(infra, t.developer_id, body, { direction: 'outbound', taskId: callId });
    if (s.admitted === false) {
      // Money spent between the dial and the answer re-queues the recipient too: the dispatcher then waits for it.
      await markRefused(infra.db, callId, REFUSED_BECAUSE[s.refusal ?? 'capacity']);
      return s.twiml;
    }
    if (await attachCallSession(infra.db, callId, { sessionId: s.sessionId, callSid })) return s.twiml;
    // Another callback for this call won the race: drop ours and answer theirs.
    await deletePendingSession(infra.db, s.sessionId);
    return answerAgain(infra, (await getConnectTarget(infra.db, callId))!, callSid);
  } catch (e) {
    if (!isApiError(e)) throw e;
    if (e.code === 'concurrent_sessions_limited') {
      await markRefused(infra.db, callId, "the developer's session cap was full when the call connected");
      return refusalTwiml(infra.config, { answered: true });
    }
    // Agent archived, no credits, engines unusable: hang up rather than let Twilio play its error message.
    await recordCallStatus(infra.db, callId, {
      status: 'in-progress',
      callSid,
      answeredBy: null,
      error: `${e.code}: ${e.message}`.slice(0, 500),
    });
    return HANGUP;
  }
}

/** Twilio's status callback: progress, and on a final status the attempt's settlement. */
export async function campaignCallStatus(
  infra: Infra,
  callId: string,
  signature: string | undefined,
  params: Record<string, string>,
): Promise<void> {
  verifyTwilioSignature(infra, signature, campaignCallPath(callId, 'status'), params);
  const error =
    params.ErrorMessage ??
    (params.SipResponseCode ? `SIP ${params.SipResponseCode}` : null) ??
    params.ErrorCode ??
    null;
  const ended = await recordCallStatus(infra.db, callId, {
    status: (params.CallStatus ?? 'unknown').slice(0, 40),
    callSid: params.CallSid ?? null,
    answeredBy: params.AnsweredBy?.slice(0, 40) ?? null,
    error: error?.slice(0, 500) ?? null,
  });
  if (ended) await enqueueSettle(infra, callId);
  else if (!(await getConnectTarget(infra.db, callId))) throw ApiError.notFound('call', callId);
}
