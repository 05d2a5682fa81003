import twilio from 'twilio';
import { getAgent } from '../../shared/domains/agents/db.ts';
import { agentAtVersion, getAgentVersion } from '../../shared/domains/agents/versions.ts';
import {
  requireCoverableCallCap,
  requireCoverableCallDuration,
  sessionMinuteHold,
} from '../../shared/domains/billing/session-hold.ts';
import { dailyHeadroom, insertSessionLimits } from '../../shared/domains/billing/spending-caps.ts';
import { creditWeights } from '../../shared/platform/metering/weights.ts';
import type {
  CreateDirectSessionBody,
  CreateTwilioSessionBody,
  TwilioSession,
} from '../../shared/contracts/sessions.ts';
import { ApiError, isApiError } from '../../shared/kernel/errors/api-error.ts';
import { newId } from '../../shared/kernel/ids.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { resolveSessionEngines, speechFor } from '../../shared/domains/realtime/engines.ts';
import { requireSessionSlot } from '../../shared/domains/realtime/session-claim.ts';
import { resolveProviderKey } from '../../shared/platform/keys/provider-key.ts';
import { sessionSecret } from '../../shared/domains/realtime/secret.ts';
import { admitSession, refusalTwiml } from '../../shared/domains/realtime/admission.ts';
import {
  insertPendingDirectSession,
  insertPendingTwilioSession,
  markSessionFailedToStart,
} from '../../shared/domains/realtime/sessions.ts';
import { admissionRefused } from '../../shared/kernel/observability/metrics.ts';
import { signSessionToken, type SessionClaims } from '../../shared/domains/realtime/token.ts';

export const TWILIO_STREAM_PATH = '/v1/sessions/twilio/stream';
export const DIRECT_SESSION_PATH = (agentId: string) => `/v1/agents/${encodeURIComponent(agentId)}/session`;

/** wss://<PUBLIC_BASE_URL host>/<path>: Twilio requires wss and strips query strings. */
export function streamUrl(publicBaseUrl: string, path: string, scheme: 'wss' | 'ws' = 'wss'): string {
  const u = new URL(publicBaseUrl);
  const base = u.pathname.replace(/\/+$/, '');
  return `${scheme}://${u.host}${base}${path}`;
}

/** TwiML connecting the call to the media-stream socket; the token travels as a <Parameter>. */
export function connectTwiml(url: string, params: Record<string, string>): string {
  const vr = new twilio.twiml.VoiceResponse();
  const stream = vr.connect().stream({ url });
  for (const [name, value] of Object.entries(params)) stream.parameter({ name, value });
  return vr.toString();
}

export async function requireActiveAgent(infra: Infra, developerId: string, agentId: string, version?: number) {
  const agent = await getAgent(infra.db, developerId, agentId);
  if (!agent || agent.status !== 'active') throw ApiError.notFound('agent', agentId);
  if (version === undefined) return agent;
  const v = await getAgentVersion(infra.db, developerId, agentId, version);
  if (!v) throw new ApiError('not_found', { resource: 'agent version', id: `${agentId}@${version}` }, 'agentVersion');
  return agentAtVersion(agent, v);
}

/**
 * POST /v1/sessions/twilio: a pending session, a short-lived token for it and the TwiML that connects the call.
 * The raw API key never leaves this request.
 */
export async function createTwilioSession(
  infra: Infra,
  developerId: string,
  body: CreateTwilioSessionBody,
  opts: { direction?: 'inbound' | 'outbound'; taskId?: string; apiKeyId?: string } = {},
): Promise<TwilioSession> {
  requireCoverableCallCap(infra.config, body.maxCredits, 'maxCredits');
  // A campaign's calls carry the campaign's cap, checked when the campaign was created.
  if (!opts.taskId) requireCoverableCallDuration(infra.config, body.maxDurationSeconds, 'maxDurationSeconds');
  const agent = await requireActiveAgent(infra, developerId, body.agentId, body.agentVersion);
  // Fail before the caller is connected: phone audio needs a provider STT (the local default cannot do 8 kHz).
  await resolveSessionEngines(infra, speechFor(infra), developerId, agent, 'twilio');
  // Twilio's socket carries no key headers: the agent's LLM must be usable with stored or platform keys.
  await resolveProviderKey(infra, { engine: infra.engines.llm.get(agent.llm_provider), developerId });
  const sessionId = newId('session');
  // A call money cannot fund is answered with the operator's message (below), not a 402 the caller never hears.
  const unfunded = await fundingRefusal(infra, developerId, sessionId, 'twilio', opts.apiKeyId);
  if (!unfunded) await requireSessionSlot(infra, developerId);
  const refused = unfunded ?? ((await refuseOverCapacity(infra, sessionId, 'twilio')) ? CAPACITY : null);
  await recordCallLimits(infra, developerId, sessionId, body, opts.apiKeyId);
  const exp = Math.floor(Date.now() / 1000) + infra.config.REALTIME_TOKEN_TTL_SECONDS;
  const claims: SessionClaims = {
    sid: sessionId,
    dev: developerId,
    agt: body.agentId,
    ch: 'twilio',
    exp,
    from: body.from,
    to: body.to,
    ...(body.instanceId ? { ins: body.instanceId } : {}),
    ...(body.agentVersion ? { ver: body.agentVersion } : {}),
    ...(opts.taskId ? { tsk: opts.taskId } : {}),
    ...(body.variables ? { var: body.variables } : {}),
  };
  await insertPendingTwilioSession(infra.db, {
    id: sessionId,
    developerId,
    agentId: body.agentId,
    direction: opts.direction ?? 'inbound',
    from: body.from,
    to: body.to,
    instanceId: body.instanceId ?? null,
    taskId: opts.taskId ?? null,
    expiresAt: new Date(exp * 1000),
    webhookUrl: body.webhookUrl ?? null,
  });
  if (refused) {
    // The caller hears the configured refusal; the session stays visible as refused (end reason `admission`, or
    // `start-failed` with the money error). A money refusal always speaks the message: busy would invite redials.
    await markSessionFailedToStart(
      infra.db,
      sessionId,
      refused.reason === 'capacity' ? 'admission' : 'start-failed',
      refused.message,
    );
    return {
      sessionId,
      agentId: body.agentId,
      twiml: refusalTwiml(infra.config, { answered: opts.direction === 'outbound' || refused.reason !== 'capacity' }),
      streamUrl: streamUrl(infra.config.PUBLIC_BASE_URL, TWILIO_STREAM_PATH),
      expiresAt: new Date(exp * 1000).toISOString(),
      admitted: false,
      refusal: refused.reason,
    };
  }
  return twilioSessionAnswer(infra, claims);
}

/**
 * The TwiML (and its token) for a pending Twilio session. Signing again for the same session gives a token that
 * opens the same session, still once: the stream claims the session, not the token.
 */
export async function twilioSessionAnswer(infra: Infra, claims: SessionClaims): Promise<TwilioSession> {
  const token = await signSessionToken(sessionSecret(infra), claims);
  const url = streamUrl(infra.config.PUBLIC_BASE_URL, TWILIO_STREAM_PATH);
  return {
    sessionId: claims.sid,
    agentId: claims.agt,
    twiml: connectTwiml(url, { token, sessionId: claims.sid }),
    streamUrl: url,
    expiresAt: new Date(claims.exp * 1000).toISOString(),
  };
}

/**
 * 402 `insufficient_credits` (or `spending_cap_reached` when a daily cap has no room for the first minute) now,
 * while the caller can still be told, rather than a refused stream later.
 */
async function requireSessionCredits(
  infra: Infra,
  developerId: string,
  sessionId: string,
  channel: string,
  apiKeyId?: string,
): Promise<void> {
  const minute = sessionMinuteHold(developerId, sessionId, channel);
  await infra.meter.check(minute);
  const headroom = await dailyHeadroom(infra.db, developerId, apiKeyId ?? null);
  const needed = creditWeights(infra.config).credits(minute.category, minute.operation, minute.units);
  if (headroom && headroom.remaining < needed) {
    throw new ApiError('spending_cap_reached', {
      scope: headroom.scope === 'key' ? 'API key' : 'developer',
      cap: headroom.cap,
      remaining: Math.max(0, headroom.remaining),
      needed,
    });
  }
}

const CAPACITY = { reason: 'capacity', message: 'the realtime fleet was at capacity' } as const;

/** Why a Twilio call is refused before it is connected. */
interface Refusal {
  reason: NonNullable<TwilioSession['refusal']>;
  message: string;
}

/** The money check of requireSessionCredits as a refusal (null: the first minute is funded). */
async function fundingRefusal(
  infra: Infra,
  developerId: string,
  sessionId: string,
  channel: string,
  apiKeyId?: string,
): Promise<Refusal | null> {
  try {
    await requireSessionCredits(infra, developerId, sessionId, channel, apiKeyId);
    return null;
  } catch (e) {
    if (!isApiError(e)) throw e;
    if (e.code === 'insufficient_credits') return { reason: 'balance', message: e.message };
    if (e.code === 'spending_cap_reached') return { reason: 'daily_cap', message: e.message };
    throw e;
  }
}

/** The call's own caps (over the agent's defaults) and the key that created it, read when the call connects. */
async function recordCallLimits(
  infra: Infra,
  developerId: string,
  sessionId: string,
  body: { maxDurationSeconds?: number; maxCredits?: number },
  apiKeyId: string | undefined,
): Promise<void> {
  if (body.maxDurationSeconds === undefined && body.maxCredits === undefined && !apiKeyId) return;
  await insertSessionLimits(infra.db, sessionId, developerId, {
    apiKeyId: apiKeyId ?? null,
    maxDurationSeconds: body.maxDurationSeconds ?? null,
    maxCredits: body.maxCredits ?? null,
  });
}

/** Admission control: true when the realtime fleet has no slot for this session (shared/domains/realtime/admission.ts). */
async function refuseOverCapacity(infra: Infra, sessionId: string, transport: 'twilio' | 'direct'): Promise<boolean> {
  const a = await admitSession(infra, sessionId);
  if (a.admitted) return false;
  admissionRefused.inc({ transport });
  infra.log.info({ sessionId, transport, capacity: a.capacity, used: a.used }, 'call refused: fleet at capacity');
  return true;
}

/** A short-lived token for the direct socket, so a browser page never holds the API key. */
export async function createDirectSession(
  infra: Infra,
  developerId: string,
  body: CreateDirectSessionBody,
  opts: { apiKeyId?: string; headers?: Record<string, string | string[] | undefined> } = {},
): Promise<{ sessionId: string; agentId: string; token: string; url: string; expiresAt: string }> {
  const { agentId, instanceId } = body;
  const headers = opts.headers ?? {};
  requireCoverableCallCap(infra.config, body.maxCredits, 'maxCredits');
  requireCoverableCallDuration(infra.config, body.maxDurationSeconds, 'maxDurationSeconds');
  const agent = await requireActiveAgent(infra, developerId, agentId, body.agentVersion);
  // The checks the socket would make, before a token exists: a missing key is a clear 400 now instead of a
  // socket that connects and then closes with 1011 (the "talk to it" button of a fresh machine).
  await resolveSessionEngines(infra, speechFor(infra), developerId, agent, 'direct', headers);
  await resolveProviderKey(infra, { engine: infra.engines.llm.get(agent.llm_provider), developerId, headers });
  const sessionId = newId('session');
  await requireSessionCredits(infra, developerId, sessionId, 'direct', opts.apiKeyId);
  await requireSessionSlot(infra, developerId);
  if (await refuseOverCapacity(infra, sessionId, 'direct')) {
    const retryAfter = infra.config.REALTIME_ADMISSION_RETRY_AFTER_SECONDS;
    throw new ApiError('over_capacity', { retryAfter }, null, { 'retry-after': String(retryAfter) });
  }
  await recordCallLimits(infra, developerId, sessionId, body, opts.apiKeyId);
  const exp = Math.floor(Date.now() / 1000) + infra.config.REALTIME_TOKEN_TTL_SECONDS;
  // The token opens this pending session once: the socket claims it (workers/realtime/direct).
  await insertPendingDirectSession(infra.db, {
    id: sessionId,
    developerId,
    agentId,
    instanceId: instanceId ?? null,
    expiresAt: new Date(exp * 1000),
    webhookUrl: body.webhookUrl ?? null,
  });
  const token = await signSessionToken(sessionSecret(infra), {
    sid: sessionId,
    dev: developerId,
    agt: agentId,
    ch: 'direct',
    exp,
    ...(instanceId ? { ins: instanceId } : {}),
    ...(body.agentVersion ? { ver: body.agentVersion } : {}),
    ...(body.variables ? { var: body.variables } : {}),
  });
  const scheme = infra.config.PUBLIC_BASE_URL.startsWith('https') ? 'wss' : 'ws';
  const url = `${streamUrl(infra.config.PUBLIC_BASE_URL, DIRECT_SESSION_PATH(agentId), scheme)}?token=${token}`;
  return { sessionId, agentId, token, url, expiresAt: new Date(exp * 1000).toISOString() };
}
