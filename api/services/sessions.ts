import twilio from 'twilio';
import { getAgent } from '../../shared/agents/db.ts';
import { sessionMinuteHold } from '../../shared/billing/session-hold.ts';
import type { CreateTwilioSessionBody, TwilioSession } from '../../shared/contracts/sessions.ts';
import { ApiError } from '../../shared/errors/api-error.ts';
import { newId } from '../../shared/ids.ts';
import type { Infra } from '../../shared/runtime/infra.ts';
import { resolveSessionEngines, speechFor } from '../../shared/realtime/engines.ts';
import { requireSessionSlot } from '../../shared/realtime/admission.ts';
import { sessionSecret } from '../../shared/realtime/secret.ts';
import { insertPendingDirectSession, insertPendingTwilioSession } from '../../shared/realtime/store.ts';
import { signSessionToken, type SessionClaims } from '../../shared/realtime/token.ts';

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

export async function requireActiveAgent(infra: Infra, developerId: string, agentId: string) {
  const agent = await getAgent(infra.db, developerId, agentId);
  if (!agent || agent.status !== 'active') throw ApiError.notFound('agent', agentId);
  return agent;
}

/**
 * POST /v1/sessions/twilio: a pending session, a short-lived token for it and the TwiML that connects the call.
 * The raw API key never leaves this request.
 */
export async function createTwilioSession(
  infra: Infra,
  developerId: string,
  body: CreateTwilioSessionBody,
  opts: { direction?: 'inbound' | 'outbound'; taskId?: string } = {},
): Promise<TwilioSession> {
  const agent = await requireActiveAgent(infra, developerId, body.agentId);
  // Fail before the caller is connected: phone audio needs a provider STT (the local default cannot do 8 kHz).
  await resolveSessionEngines(infra, speechFor(infra), developerId, agent, 'twilio');
  const sessionId = newId('session');
  await requireSessionCredits(infra, developerId, sessionId, 'twilio');
  await requireSessionSlot(infra, developerId);
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
    ...(opts.taskId ? { tsk: opts.taskId } : {}),
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
  });
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

/** 402 `insufficient_credits` now, while the caller can still be told, rather than a refused stream later. */
function requireSessionCredits(infra: Infra, developerId: string, sessionId: string, channel: string) {
  return infra.meter.check(sessionMinuteHold(developerId, sessionId, channel));
}

/** A short-lived token for the direct socket, so a browser page never holds the API key. */
export async function createDirectSession(
  infra: Infra,
  developerId: string,
  agentId: string,
  instanceId?: string,
): Promise<{ sessionId: string; agentId: string; token: string; url: string; expiresAt: string }> {
  await requireActiveAgent(infra, developerId, agentId);
  const sessionId = newId('session');
  await requireSessionCredits(infra, developerId, sessionId, 'direct');
  await requireSessionSlot(infra, developerId);
  const exp = Math.floor(Date.now() / 1000) + infra.config.REALTIME_TOKEN_TTL_SECONDS;
  // The token opens this pending session once: the socket claims it (workers/realtime/direct).
  await insertPendingDirectSession(infra.db, {
    id: sessionId,
    developerId,
    agentId,
    instanceId: instanceId ?? null,
    expiresAt: new Date(exp * 1000),
  });
  const token = await signSessionToken(sessionSecret(infra), {
    sid: sessionId,
    dev: developerId,
    agt: agentId,
    ch: 'direct',
    exp,
    ...(instanceId ? { ins: instanceId } : {}),
  });
  const scheme = infra.config.PUBLIC_BASE_URL.startsWith('https') ? 'wss' : 'ws';
  const url = `${streamUrl(infra.config.PUBLIC_BASE_URL, DIRECT_SESSION_PATH(agentId), scheme)}?token=${token}`;
  return { sessionId, agentId, token, url, expiresAt: new Date(exp * 1000).toISOString() };
}
