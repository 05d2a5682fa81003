import twilio from 'twilio';
import { getAgent } from '../../shared/agents/db.ts';
import { sessionMinuteHold } from '../../shared/billing/session-hold.ts';
import type { CreateTwilioSessionBody, TwilioSession } from '../../shared/contracts/sessions.ts';
import { ApiError } from '../../shared/errors/api-error.ts';
import { newId } from '../../shared/ids.ts';
import type { Infra } from '../../shared/runtime/infra.ts';
import { resolveSessionEngines, speechFor } from '../../shared/realtime/engines.ts';
import { resolveLlmKey } from '../../shared/engines/llm/registry.ts';
import { sessionSecret } from '../../shared/realtime/secret.ts';
import { insertPendingTwilioSession } from '../../shared/realtime/store.ts';
import { signSessionToken } from '../../shared/realtime/token.ts';

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
  // Twilio's socket carries no key headers: the agent's LLM must be usable with stored or platform keys.
  await resolveLlmKey(infra, agent.llm_provider, developerId);
  const sessionId = newId('session');
  await requireSessionCredits(infra, developerId, sessionId, 'twilio');
  const ttl = infra.config.REALTIME_TOKEN_TTL_SECONDS;
  const exp = Math.floor(Date.now() / 1000) + ttl;
  const token = await signSessionToken(sessionSecret(infra), {
    sid: sessionId,
    dev: developerId,
    agt: body.agentId,
    ch: 'twilio',
    exp,
    from: body.from,
    to: body.to,
    ...(body.instanceId ? { ins: body.instanceId } : {}),
    ...(opts.taskId ? { tsk: opts.taskId } : {}),
  });
  const expiresAt = new Date(exp * 1000);
  await insertPendingTwilioSession(infra.db, {
    id: sessionId,
    developerId,
    agentId: body.agentId,
    direction: opts.direction ?? 'inbound',
    from: body.from,
    to: body.to,
    instanceId: body.instanceId ?? null,
    taskId: opts.taskId ?? null,
    expiresAt,
  });
  const url = streamUrl(infra.config.PUBLIC_BASE_URL, TWILIO_STREAM_PATH);
  return {
    sessionId,
    agentId: body.agentId,
    twiml: connectTwiml(url, { token, sessionId }),
    streamUrl: url,
    expiresAt: expiresAt.toISOString(),
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
  headers: Record<string, string | string[] | undefined> = {},
): Promise<{ sessionId: string; agentId: string; token: string; url: string; expiresAt: string }> {
  const agent = await requireActiveAgent(infra, developerId, agentId);
  // The checks the socket would make, before a token exists: a missing key is a clear 400 now instead of a
  // socket that connects and then closes with 1011 (the "talk to it" button of a fresh machine).
  await resolveSessionEngines(infra, speechFor(infra), developerId, agent, 'direct', headers);
  await resolveLlmKey(infra, agent.llm_provider, developerId, headers);
  const sessionId = newId('session');
  await requireSessionCredits(infra, developerId, sessionId, 'direct');
  const exp = Math.floor(Date.now() / 1000) + infra.config.REALTIME_TOKEN_TTL_SECONDS;
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
