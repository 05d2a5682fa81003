import { EngineError } from '../../kernel/errors/engine-error.ts';
import { TWILIO_DEFAULT_BASE, twilioCreds } from '../realtime/outbound.ts';
import type { Infra } from '../../platform/infra.ts';

/** Twilio REST calls of the campaign dialler: place a call, and find one placed by a dial whose answer was lost. */
function account(infra: Infra) {
  const { sid, token } = twilioCreds(infra);
  const base = (infra.config.TWILIO_API_BASE_URL ?? TWILIO_DEFAULT_BASE).replace(/\/+$/, '');
  return {
    url: `${base}/2010-04-01/Accounts/${encodeURIComponent(sid)}/Calls.json`,
    authorization: `Basic ${Buffer.from(`${sid}:${token}`).toString('base64')}`,
  };
}

async function send(url: string, init: RequestInit): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw EngineError.network('twilio', e);
  }
  const text = await res.text();
  if (!res.ok) throw EngineError.fromStatus('twilio', res.status, text);
  return JSON.parse(text) as unknown;
}

export interface PlaceCall {
  to: string;
  from: string;
  /** Fetched by Twilio when the callee answers (TwiML). */
  url: string;
  statusCallback: string;
  /** Seconds it rings before Twilio gives up (`Timeout`, no-answer). */
  ringSeconds?: number;
  timeLimitSeconds?: number;
}

/** POST /Calls.json (form-encoded, basic auth): returns Twilio's CallSid and status. */
export async function placeCall(
  infra: Infra,
  c: PlaceCall,
  signal: AbortSignal,
): Promise<{ sid: string; status: string }> {
  const a = account(infra);
  const form = new URLSearchParams({
    To: c.to,
    From: c.from,
    Url: c.url,
    Method: 'POST',
    StatusCallback: c.statusCallback,
    StatusCallbackMethod: 'POST',
  });
  for (const ev of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', ev);
  if (c.ringSeconds) form.set('Timeout', String(c.ringSeconds));
  // Twilio ends the call itself past the limit, whatever happens to the session.
  if (c.timeLimitSeconds) form.set('TimeLimit', String(c.timeLimitSeconds));
  const call = (await send(a.url, {
    method: 'POST',
    headers: { authorization: a.authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
    signal,
  })) as { sid?: string; status?: string };
  if (!call.sid) throw EngineError.fromStatus('twilio', 502, 'no sid in the created call');
  return { sid: call.sid, status: call.status ?? 'queued' };
}

/**
 * Calls to `to` from `from` created at or after `since` (GET /Calls.json?To=&From=), newest first.
 * A dial whose POST may have reached Twilio (the worker died, the answer was lost) looks here before dialling
 * again, so the callee is not called twice.
 */
export async function findCalls(
  infra: Infra,
  q: { to: string; from: string; since: Date },
  signal: AbortSignal,
): Promise<Array<{ sid: string; status: string; createdAt: Date }>> {
  const a = account(infra);
  // Newest first; filtered by creation time here (StartTime is empty until a call connects).
  const params = new URLSearchParams({ To: q.to, From: q.from, PageSize: '50' });
  const body = (await send(`${a.url}?${params}`, { headers: { authorization: a.authorization }, signal })) as {
    calls?: Array<{ sid: string; status: string; date_created: string }>;
  };
  return (body.calls ?? [])
    .map((c) => ({ sid: c.sid, status: c.status, createdAt: new Date(c.date_created) }))
    .filter((c) => c.createdAt.getTime() >= q.since.getTime() - 2000);
}

/** Twilio's record of one call (GET /Calls/{Sid}.json): its status now and, with AMD, who answered. */
export async function lookupCall(
  infra: Infra,
  callSid: string,
  signal: AbortSignal,
): Promise<{ status: string; answeredBy: string | null }> {
  const a = account(infra);
  const url = a.url.replace(/\.json$/, `/${encodeURIComponent(callSid)}.json`);
  const call = (await send(url, { headers: { authorization: a.authorization }, signal })) as {
    status?: string;
    answered_by?: string | null;
  };
  if (!call.status) throw EngineError.fromStatus('twilio', 502, 'no status in the call record');
  return { status: call.status, answeredBy: call.answered_by ?? null };
}
