import { EngineError } from '../../kernel/errors/engine-error.ts';
import { trimSlash, vendorFetch, vendorJson, type VendorRequest } from '../core/vendor-client.ts';

/**
 * Twilio's REST API (2010-04-01): the one client of every Twilio call the platform places, looks up or changes
 * (Calls: the outbound dialler, the campaign dialler and reconciler, a live session's transfer and hang-up) and of
 * every SMS it sends (Messages: the portal's sign-in codes). Form-encoded bodies and HTTP Basic auth with the
 * account SID and auth token, over the vendor client: header deadline, EngineError mapping, and retries only where
 * sending twice cannot place or change a call, or send an SMS, twice.
 */

const DEFAULT_BASE = 'https://api.twilio.com';

/** One Twilio account: its API root (`TWILIO_API_BASE_URL`, a local double in tests; default Twilio's) and keys. */
export interface TwilioAccount {
  baseUrl?: string;
  sid: string;
  token: string;
}

/** What a live call is made to do instead of streaming to the agent. */
export type CallUpdate = { twiml: string } | { status: 'completed' };

export interface NewCall {
  to: string;
  from: string;
  /** Fetched (POST) by Twilio when the callee answers: the call's TwiML. */
  url: string;
  /** Receives the call's progress (POST: initiated, ringing, answered, completed). */
  statusCallback: string;
  /** Seconds it rings before Twilio gives up (`Timeout`, no-answer). */
  ringSeconds?: number;
  /** Twilio ends the call itself past this many seconds (`TimeLimit`), whatever happens to the session. */
  timeLimitSeconds?: number;
  /**
   * Async answering-machine detection (`MachineDetection` = mode): the call connects at once and Twilio POSTs its
   * answer to `callback` when ready, so a person never waits on detection.
   */
  machineDetection?: { mode: string; callback: string };
}

export interface TwilioCall {
  sid: string;
  status: string;
  createdAt: Date;
}

/**
 * POST /Calls.json: places a call; returns Twilio's CallSid and status. A POST that places a call is never sent
 * twice blindly (a duplicate call is worse than a failure): the vendor client re-sends it only when Twilio never
 * received it (refused connection) or refused it with 429. A timeout or a lost answer fails (retryable) and the
 * caller decides; the campaign dialler looks for the call with `listCalls` before dialling again.
 */
export async function createCall(
  a: TwilioAccount,
  c: NewCall,
  signal: AbortSignal,
): Promise<{ sid: string; status: string }> {
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
  if (c.timeLimitSeconds) form.set('TimeLimit', String(c.timeLimitSeconds));
  if (c.machineDetection) {
    form.set('MachineDetection', c.machineDetection.mode);
    form.set('AsyncAmd', 'true');
    form.set('AsyncAmdStatusCallback', c.machineDetection.callback);
    form.set('AsyncAmdStatusCallbackMethod', 'POST');
  }
  const call = await vendorJson<{ sid?: string; status?: string }>('twilio', callsUrl(a), post(a, form, signal));
  if (!call.sid) throw EngineError.fromStatus('twilio', 502, 'no sid in the created call');
  return { sid: call.sid, status: call.status ?? 'queued' };
}

/** GET /Calls.json?To=&From=: the account's latest calls (up to 50) between two numbers, newest first. */
export async function listCalls(
  a: TwilioAccount,
  q: { to: string; from: string },
  signal: AbortSignal,
): Promise<TwilioCall[]> {
  const params = new URLSearchParams({ To: q.to, From: q.from, PageSize: '50' });
  const body = await vendorJson<{ calls?: Array<{ sid: string; status: string; date_created: string }> }>(
    'twilio',
    `${callsUrl(a)}?${params}`,
    { headers: basicAuth(a), signal },
  );
  return (body.calls ?? []).map((c) => ({ sid: c.sid, status: c.status, createdAt: new Date(c.date_created) }));
}

/** GET /Calls/{Sid}.json: Twilio's record of one call, its status now and, with AMD, who answered. */
export async function getCall(
  a: TwilioAccount,
  callSid: string,
  signal: AbortSignal,
): Promise<{ status: string; answeredBy: string | null }> {
  const call = await vendorJson<{ status?: string; answered_by?: string | null }>('twilio', callsUrl(a, callSid), {
    headers: basicAuth(a),
    signal,
  });
  if (!call.status) throw EngineError.fromStatus('twilio', 502, 'no status in the call record');
  return { status: call.status, answeredBy: call.answered_by ?? null };
}

/**
 * POST /Calls/{Sid}.json: new TwiML for a live call (a `<Dial>` hands the caller to a person; it ends the media
 * stream) or `Status=completed` (hang up). A hang-up may be sent again (a second one changes nothing); new TwiML
 * is not, as it would run twice (a second dial to the transfer target).
 */
export async function updateCall(
  a: TwilioAccount,
  callSid: string,
  update: CallUpdate,
  signal: AbortSignal,
): Promise<void> {
  const form = new URLSearchParams('twiml' in update ? { Twiml: update.twiml } : { Status: update.status });
  const res = await vendorFetch('twilio', callsUrl(a, callSid), {
    ...post(a, form, signal),
    idempotent: 'status' in update,
  });
  // Twilio answered 2xx: the call was changed; the rest of its answer is not needed.
  await res.body?.cancel().catch(() => {});
}

export interface NewMessage {
  to: string;
  /** An SMS-capable Twilio number (`From`), or a Messaging Service SID, MG… (`MessagingServiceSid`). */
  from: string;
  body: string;
}

/**
 * Longest wait for Twilio to accept or refuse an SMS: it answers a Messages POST at once (delivery happens later),
 * and the person asking for a sign-in code is waiting on the answer.
 */
const MESSAGE_HEADERS_TIMEOUT_MS = 15_000;

/**
 * POST /Messages.json: sends one SMS; returns Twilio's MessageSid. Like placing a call, never sent twice blindly (the
 * person would get two texts, and a sign-in code twice): re-sent only when Twilio never received it or refused it
 * with 429. A timeout, a 5xx or a lost answer fails (retryable) after one request.
 */
export async function sendMessage(a: TwilioAccount, m: NewMessage, signal: AbortSignal): Promise<{ sid: string }> {
  // The fields and order the twilio SDK sends (To, then From or MessagingServiceSid, then Body).
  const form = new URLSearchParams({ To: m.to });
  form.set(m.from.startsWith('MG') ? 'MessagingServiceSid' : 'From', m.from);
  form.set('Body', m.body);
  const msg = await vendorJson<{ sid?: string }>('twilio', accountUrl(a, 'Messages.json'), {
    ...post(a, form, signal),
    headersTimeoutMs: MESSAGE_HEADERS_TIMEOUT_MS,
  });
  if (!msg.sid) throw EngineError.fromStatus('twilio', 502, 'no sid in the created message');
  return { sid: msg.sid };
}

function accountUrl(a: TwilioAccount, resource: string): string {
  return `${trimSlash(a.baseUrl ?? DEFAULT_BASE)}/2010-04-01/Accounts/${encodeURIComponent(a.sid)}/${resource}`;
}

function callsUrl(a: TwilioAccount, callSid?: string): string {
  return accountUrl(a, callSid === undefined ? 'Calls.json' : `Calls/${encodeURIComponent(callSid)}.json`);
}

function basicAuth(a: TwilioAccount): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${a.sid}:${a.token}`).toString('base64')}` };
}

function post(a: TwilioAccount, form: URLSearchParams, signal: AbortSignal): VendorRequest {
  return {
    method: 'POST',
    headers: { ...basicAuth(a), 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
    signal,
  };
}
