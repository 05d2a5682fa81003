import { startHttpDouble, type HttpDouble } from './http-double.ts';

export interface TwilioRestDouble extends HttpDouble {
  /** Form bodies of the calls placed, oldest first. */
  calls: URLSearchParams[];
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
}): Promise<TwilioRestDouble> {
  const calls: URLSearchParams[] = [];
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
        if (req.method !== 'POST') return false;
        const form = new URLSearchParams(req.body.toString('utf8'));
        if (req.path === `${base}/Calls.json`) {
          calls.push(form);
          d.sendJson(res, 201, {
            sid: `CA${String(calls.length).padStart(32, '0')}`,
            account_sid: sid,
            status: 'queued',
            to: form.get('To'),
            from: form.get('From'),
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
  return Object.assign(double, { calls, messages });
}
