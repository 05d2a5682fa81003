import { startHttpDouble, type HttpDouble } from './http-double.ts';

export interface TwilioRestDouble extends HttpDouble {
  /** Form bodies of the calls placed, oldest first. */
  calls: URLSearchParams[];
  /** The next call placed is created but its answer is lost (the connection drops): a dial whose result never came. */
  dropNextCallAnswer(): void;
  /** Form bodies of the messages sent, oldest first. */
  messages: URLSearchParams[];
}

const ERROR_CODES: Record<number, [number, string]> = {
  401: [20003, 'Authenticate'],
  404: [20404, 'The requested resource was not found'],
  503: [20500, 'Service unavailable'],
};

/**
 * Twilio's REST API (2010-04-01) for one account: `POST /Accounts/{sid}/Calls.json` (place a call) and
 * `POST /Accounts/{sid}/Messages.json` (send an SMS), form-encoded bodies, HTTP Basic auth with the account SID and
 * auth token; 201 with the created resource. Errors `{code, message, more_info, status}`. A message to a number in
 * `unreachable` is refused with 400 / 21211, as Twilio refuses numbers it cannot reach.
 */
export async function startTwilioRestDouble(opts: {
  accountSid: string;
  authToken: string;
  unreachable?: string[];
  /** Called for each call placed, after it was created (e.g. to run it: see twilio-voice.ts). */
  onCall?: (call: { sid: string; form: URLSearchParams }) => void;
}): Promise<TwilioRestDouble> {
  const calls: URLSearchParams[] = [];
  const created: Array<{ sid: string; at: Date }> = [];
  let dropNext = false;
  const messages: URLSearchParams[] = [];
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
              status: 'queued',
              date_created: c.at.toUTCString(),
            }));
          d.sendJson(res, 200, { calls: list, page: 0, page_size: 50 });
          return true;
        }
        if (req.method !== 'POST') return false;
        const form = new URLSearchParams(req.body.toString('utf8'));
        if (req.path === `${base}/Calls.json`) {
          calls.push(form);
          const callSid = `CA${String(calls.length).padStart(32, '0')}`;
          created.push({ sid: callSid, at: new Date() });
          if (dropNext) {
            dropNext = false;
            res.destroy();
          } else {
            d.sendJson(res, 201, {
              sid: callSid,
              account_sid: sid,
              status: 'queued',
              to: form.get('To'),
              from: form.get('From'),
            });
          }
          opts.onCall?.({ sid: callSid, form });
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
          messages.push(form);
          d.sendJson(res, 201, {
            sid: `SM${String(messages.length).padStart(32, '0')}`,
            account_sid: sid,
            to: form.get('To'),
            from: form.get('From'),
            messaging_service_sid: form.get('MessagingServiceSid'),
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
  return Object.assign(double, { calls, messages, dropNextCallAnswer: () => void (dropNext = true) });
}
