import twilio from 'twilio';
import { startHttpDouble, type HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';

/** A live-call update (`POST /Accounts/{sid}/Calls/{CallSid}.json`): new `Twiml` or `Status=completed`. */
export interface CallUpdate {
  callSid: string;
  form: URLSearchParams;
}

export interface TwilioRestDouble extends HttpDouble {
  /** Form bodies of the calls placed, oldest first. */
  calls: URLSearchParams[];
  /** The next call placed is created but its answer is lost (the connection drops): a dial whose result never came. */
  dropNextCallAnswer(): void;
  /** Form bodies of the messages sent, oldest first. */
  messages: URLSearchParams[];
  /** The next message is sent but its answer is lost (the connection drops): an SMS whose result never came. */
  dropNextMessageAnswer(): void;
  /** Live-call updates, oldest first. */
  updates: CallUpdate[];
  /** Each call's status as `GET /Calls/{CallSid}.json` reports it (set by whoever runs the call: `onCall`'s `setStatus`). */
  statuses: Map<string, { status: string; answeredBy: string | null }>;
  /** Numbers whose calls `GET /Calls/{CallSid}.json` answers 503 for (Twilio cannot be asked about them). */
  failLookups: Set<string>;
  /**
   * Called after an update is answered, as Twilio then acts on the call: new TwiML or a hang-up ends the call's
   * media stream (the test's caller sends `stop`).
   */
  onUpdate: ((u: CallUpdate) => void) | null;
  /**
   * Finishes async answering-machine detection for the `index`-th call placed: POSTs its AsyncAmdStatusCallback
   * (form `AccountSid`, `CallSid`, `AnsweredBy`, `MachineDetectionDuration`) signed with `X-Twilio-Signature`
   * over the URL the call named, to `deliverTo` (the platform's real address behind that public URL).
   */
  sendAmd(index: number, answeredBy: string, deliverTo: string, callSid?: string): Promise<Response>;
}

export type SetCallStatus = (status: string, answeredBy?: string | null) => void;

/** Twilio's AnsweredBy values (async AMD). */
const ANSWERED_BY = [
  'human',
  'machine_start',
  'machine_end_beep',
  'machine_end_silence',
  'machine_end_other',
  'fax',
  'unknown',
];

const ERROR_CODES: Record<number, [number, string]> = {
  401: [20003, 'Authenticate'],
  404: [20404, 'The requested resource was not found'],
  503: [20500, 'Service unavailable'],
};

/**
 * Twilio's REST API (2010-04-01) for one account: `POST /Accounts/{sid}/Calls.json` (place a call, with optional
 * async answering-machine detection: `MachineDetection`, `AsyncAmd`, `AsyncAmdStatusCallback`; see `sendAmd`),
 * `POST /Accounts/{sid}/Calls/{CallSid}.json` (update a live call: `Twiml`, `Url` or `Status=completed`),
 * `GET /Accounts/{sid}/Calls.json?To=&From=` (list) and `GET /Accounts/{sid}/Calls/{CallSid}.json` (one call) and
 * `POST /Accounts/{sid}/Messages.json` (send an SMS), form-encoded bodies, HTTP Basic auth with the account SID and
 * auth token; 201 with the created resource. Errors `{code, message, more_info, status}`. A message to a number in
 * `unreachable` is refused with 400 / 21211, as Twilio refuses numbers it cannot reach; one without `To`, a sender
 * (`From` or `MessagingServiceSid`) or `Body` with 400 / 21604, 21603, 21602.
 */
export async function startTwilioRestDouble(opts: {
  accountSid: string;
  authToken: string;
  unreachable?: string[];
  /**
   * Called for each call placed, after it was created (e.g. to run it: see twilio-voice.ts); `setStatus` records
   * the call's progress for `GET /Calls/{CallSid}.json`.
   */
  onCall?: (call: { sid: string; form: URLSearchParams; setStatus: SetCallStatus }) => void;
}): Promise<TwilioRestDouble> {
  const calls: URLSearchParams[] = [];
  const created: Array<{ sid: string; at: Date }> = [];
  let dropNext = false;
  let dropNextMessage = false;
  const messages: URLSearchParams[] = [];
  const updates: CallUpdate[] = [];
  const statuses = new Map<string, { status: string; answeredBy: string | null }>();
  const callSid = (i: number) => `CA${String(i + 1).padStart(32, '0')}`;
  const sid = opts.accountSid;
  const base = `/2010-04-01/Accounts/${sid}`;
  const double = await startHttpDouble(
    {
      name: 'twilio',
      errorBody: (status, message) => {
        const [code, text] = ERROR_CODES[status] ?? [20001, message];
        return {
          body: JSON.stringify({
            code,
            message: text,
            more_info: `https://www.twilio.com/docs/errors/${code}`,
            status,
          }),
        };
      },
      authorize: (req, d) => req.headers.authorization === `Basic ${d.key}`,
      route(req, res, d) {
        // GET /Calls.json?To=&From=: the account's calls, newest first (Twilio's list filters).
        if (req.method === 'GET' && req.path === `${base}/Calls.json`) {
          const list = calls
            .map((form, i) => ({ form, ...created[i]! }))
            .filter((c) => ['To', 'From'].every((k) => !req.query.get(k) || c.form.get(k) === req.query.get(k)))
            .reverse()
            .map((c) => ({
              sid: c.sid,
              to: c.form.get('To'),
              from: c.form.get('From'),
              status: statuses.get(c.sid)?.status ?? 'queued',
              date_created: c.at.toUTCString(),
            }));
          d.sendJson(res, 200, { calls: list, page: 0, page_size: 50 });
          return true;
        }
        // GET /Calls/{CallSid}.json: one call's record (status, answered_by) as Twilio reports it now.
        const one = new RegExp(`^${base}/Calls/(CA[0-9a-zA-Z]{1,40})\\.json$`).exec(req.path);
        if (req.method === 'GET' && one) {
          const i = created.findIndex((c) => c.sid === one[1]);
          if (i >= 0 && (double as TwilioRestDouble).failLookups.has(calls[i]!.get('To') ?? '')) {
            d.sendJson(res, 503, { code: 20500, message: 'Service unavailable', status: 503 });
          } else if (i < 0) {
            d.sendJson(res, 404, {
              code: 20404,
              message: `The requested resource ${req.path} was not found`,
              more_info: 'https://www.twilio.com/docs/errors/20404',
              status: 404,
            });
          } else {
            const st = statuses.get(one[1]!) ?? { status: 'queued', answeredBy: null };
            d.sendJson(res, 200, {
              sid: one[1],
              account_sid: sid,
              to: calls[i]!.get('To'),
              from: calls[i]!.get('From'),
              status: st.status,
              answered_by: st.answeredBy,
              date_created: created[i]!.at.toUTCString(),
              direction: 'outbound-api',
            });
          }
          return true;
        }
        if (req.method !== 'POST') return false;
        const form = new URLSearchParams(req.body.toString('utf8'));
        const update = new RegExp(`^${base}/Calls/(CA[0-9a-zA-Z]{1,40})\\.json$`).exec(req.path);
        if (update) {
          const status = form.get('Status');
          if (!form.get('Twiml') && !form.get('Url') && !status) {
            d.sendJson(res, 400, { code: 21205, message: 'Url, Twiml or Status is required', status: 400 });
            return true;
          }
          if (status && !['completed', 'canceled'].includes(status)) {
            d.sendJson(res, 400, { code: 21218, message: `Invalid Status: ${status}`, status: 400 });
            return true;
          }
          const u = { callSid: update[1]!, form };
          updates.push(u);
          d.sendJson(res, 200, {
            sid: u.callSid,
            account_sid: sid,
            status: status ?? 'in-progress',
          });
          setImmediate(() => (double as TwilioRestDouble).onUpdate?.(u));
          return true;
        }
        if (req.path === `${base}/Calls.json`) {
          const amd = form.get('MachineDetection');
          if (amd && !['Enable', 'DetectMessageEnd'].includes(amd)) {
            d.sendJson(res, 400, { code: 21218, message: `Invalid MachineDetection: ${amd}`, status: 400 });
            return true;
          }
          calls.push(form);
          const newSid = callSid(calls.length - 1);
          created.push({ sid: newSid, at: new Date() });
          if (dropNext) {
            dropNext = false;
            res.destroy();
          } else {
            d.sendJson(res, 201, {
              sid: newSid,
              account_sid: sid,
              status: 'queued',
              to: form.get('To'),
              from: form.get('From'),
            });
          }
          statuses.set(newSid, { status: 'queued', answeredBy: null });
          opts.onCall?.({
            sid: newSid,
            form,
            setStatus: (status, answeredBy) =>
              statuses.set(newSid, { status, answeredBy: answeredBy ?? statuses.get(newSid)?.answeredBy ?? null }),
          });
          return true;
        }
        if (req.path === `${base}/Messages.json`) {
          if (opts.unreachable?.includes(form.get('To') ?? '')) {
            d.sendJson(res, 400, {
              code: 21211,
              message: "The 'To' number is not a valid phone number.",
              more_info: 'https://www.twilio.com/docs/errors/21211',
              status: 400,
            });
            return true;
          }
          const from = form.get('From');
          const service = form.get('MessagingServiceSid');
          // Twilio's refusals of a message missing a part, checked in its order.
          const missing: Array<[boolean, number, string]> = [
            [!form.get('To'), 21604, "A 'To' phone number is required."],
            [!(from || service), 21603, "A 'From' or 'MessagingServiceSid' parameter is required to send a message."],
            [!form.get('Body'), 21602, 'Message body is required.'],
          ];
          const refusal = missing.find(([absent]) => absent);
          if (refusal) {
            const [, code, message] = refusal;
            d.sendJson(res, 400, {
              code,
              message,
              more_info: `https://www.twilio.com/docs/errors/${code}`,
              status: 400,
            });
            return true;
          }
          messages.push(form);
          if (dropNextMessage) {
            dropNextMessage = false;
            res.destroy();
            return true;
          }
          d.sendJson(res, 201, {
            sid: `SM${String(messages.length).padStart(32, '0')}`,
            account_sid: sid,
            to: form.get('To'),
            from,
            messaging_service_sid: service,
            body: form.get('Body'),
            status: 'queued',
            num_segments: '1',
            direction: 'outbound-api',
            date_created: new Date().toUTCString(),
            uri: `${base}/Messages/SM${String(messages.length).padStart(32, '0')}.json`,
          });
          return true;
        }
        return false;
      },
    },
    Buffer.from(`${sid}:${opts.authToken}`).toString('base64'),
  );
  const sendAmd = async (index: number, answeredBy: string, deliverTo: string, sidOverride?: string) => {
    const form = calls[index];
    const url = form?.get('AsyncAmdStatusCallback');
    if (!form || !url || form.get('AsyncAmd') !== 'true') throw new Error(`call ${index} did not ask for async AMD`);
    if (!ANSWERED_BY.includes(answeredBy)) throw new Error(`Twilio never sends AnsweredBy=${answeredBy}`);
    const params = {
      AccountSid: sid,
      CallSid: sidOverride ?? callSid(index),
      AnsweredBy: answeredBy,
      MachineDetectionDuration: answeredBy === 'human' ? '1320' : '4120',
    };
    const target = new URL(url);
    return fetch(deliverTo.replace(/\/+$/, '') + target.pathname + target.search, {
      method: form.get('AsyncAmdStatusCallbackMethod') === 'GET' ? 'GET' : 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(opts.authToken, url, params),
      },
      body: new URLSearchParams(params),
    });
  };
  return Object.assign(double, {
    calls,
    messages,
    updates,
    statuses,
    failLookups: new Set<string>(),
    onUpdate: null,
    sendAmd,
    dropNextCallAnswer: () => void (dropNext = true),
    dropNextMessageAnswer: () => void (dropNextMessage = true),
  });
}
