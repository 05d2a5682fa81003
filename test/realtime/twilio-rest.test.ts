import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createCall,
  getCall,
  listCalls,
  sendMessage,
  updateCall,
  type TwilioAccount,
} from '../../shared/engines/telephony/twilio-rest.ts';
import { startTwilioRestDouble, type TwilioRestDouble } from '../../support/doubles/twilio-rest.ts';
import { engineError } from '../speech/vendors/conformance.ts';

/**
 * The one Twilio REST client against the Twilio double (real sockets, Twilio's wire format): what it sends, and
 * which failures it sends again. Placing a call or sending an SMS is never repeated blindly (a duplicate is worse
 * than a failure); reads and a hang-up are.
 */
const SID = 'AC00000000000000000000000000000042';
const TOKEN = 'twilio-rest-token';
let rest: TwilioRestDouble;
let account: TwilioAccount;
const signal = () => AbortSignal.timeout(10_000);
const UNREACHABLE = '+15550009999';
const newCall = { to: '+15550004444', from: '+15550001111', url: 'https://x/connect', statusCallback: 'https://x/st' };

beforeAll(async () => {
  rest = await startTwilioRestDouble({ accountSid: SID, authToken: TOKEN, unreachable: [UNREACHABLE] });
  account = { baseUrl: `${rest.url}/`, sid: SID, token: TOKEN };
});
afterAll(() => rest.close());
beforeEach(() => {
  rest.requests.length = 0;
});

describe('Twilio REST client', () => {
  it('places a call with its callbacks, limits and async AMD, form-encoded with basic auth', async () => {
    const call = await createCall(
      account,
      {
        ...newCall,
        ringSeconds: 25,
        timeLimitSeconds: 600,
        machineDetection: { mode: 'Enable', callback: 'https://x/a' },
      },
      signal(),
    );
    expect(call).toEqual({ sid: expect.stringMatching(/^CA/), status: 'queued' });
    const form = rest.calls.at(-1)!;
    expect(Object.fromEntries(form)).toMatchObject({
      To: newCall.to,
      From: newCall.from,
      Url: newCall.url,
      Method: 'POST',
      StatusCallback: newCall.statusCallback,
      Timeout: '25',
      TimeLimit: '600',
      MachineDetection: 'Enable',
      AsyncAmd: 'true',
      AsyncAmdStatusCallback: 'https://x/a',
    });
    expect(form.getAll('StatusCallbackEvent')).toEqual(['initiated', 'ringing', 'answered', 'completed']);
    expect(rest.requests.at(-1)!.headers['content-type']).toContain('application/x-www-form-urlencoded');
    expect(await getCall(account, call.sid, signal())).toEqual({ status: 'queued', answeredBy: null });
    const listed = await listCalls(account, { to: newCall.to, from: newCall.from }, signal());
    expect(listed[0]).toMatchObject({ sid: call.sid, status: 'queued' });
    expect(listed[0]!.createdAt).toBeInstanceOf(Date);
  });

  it('does not place a call twice: a 5xx or a lost answer fails (retryable) after one request', async () => {
    const placed = rest.calls.length;
    rest.failNext(503);
    const refused = await engineError(createCall(account, newCall, signal()));
    expect(refused).toMatchObject({ provider: 'twilio', status: 503, retryable: true });
    expect(rest.requests).toHaveLength(1);

    rest.dropNextCallAnswer();
    const lost = await engineError(createCall(account, newCall, signal()));
    expect(lost).toMatchObject({ kind: 'unavailable', retryable: true });
    expect(rest.calls.length - placed).toBe(1); // created once at Twilio, not again
  });

  it('sends a call again when Twilio refused it with 429 (it did not take it)', async () => {
    const placed = rest.calls.length;
    rest.failNext(429);
    await createCall(account, newCall, signal());
    expect(rest.requests).toHaveLength(2);
    expect(rest.calls.length - placed).toBe(1);
  });

  it('retries a hang-up and a read through a 503, never new TwiML', async () => {
    const { sid } = await createCall(account, newCall, signal());
    rest.requests.length = 0;
    rest.failNext(503);
    await updateCall(account, sid, { status: 'completed' }, signal());
    expect(rest.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
    expect(rest.updates.at(-1)!.form.get('Status')).toBe('completed');

    rest.requests.length = 0;
    rest.failNext(503);
    expect(await getCall(account, sid, signal())).toMatchObject({ status: 'queued' });
    expect(rest.requests).toHaveLength(2);

    rest.requests.length = 0;
    rest.failNext(503);
    const twiml = await engineError(
      updateCall(account, sid, { twiml: '<Response><Dial>+1555</Dial></Response>' }, signal()),
    );
    expect(twiml).toMatchObject({ status: 503, retryable: true });
    expect(rest.requests).toHaveLength(1);
  });

  it('maps Twilio refusals to EngineErrors: unknown call 404, wrong token auth (both permanent)', async () => {
    const missing = await engineError(getCall(account, 'CA0000000000000000000000000000ffff', signal()));
    expect(missing).toMatchObject({ kind: 'bad_request', status: 404, retryable: false });
    const wrong = await engineError(createCall({ ...account, token: 'nope' }, newCall, signal()));
    expect(wrong).toMatchObject({ kind: 'auth', status: 401, retryable: false });
  });

  it('sends an SMS from a number or a Messaging Service: To, From or MessagingServiceSid, Body', async () => {
    const sms = { to: '+15550004444', from: '+15550001111', body: '123456 is your code' };
    const sent = await sendMessage(account, sms, signal());
    expect(sent.sid).toMatch(/^SM/);
    expect([...rest.messages.at(-1)!]).toEqual([
      ['To', sms.to],
      ['From', sms.from],
      ['Body', sms.body],
    ]);
    expect(rest.requests.at(-1)!.headers['content-type']).toContain('application/x-www-form-urlencoded');
    await sendMessage(account, { ...sms, from: 'MG00000000000000000000000000000001' }, signal());
    expect(Object.fromEntries(rest.messages.at(-1)!)).toEqual({
      To: sms.to,
      MessagingServiceSid: 'MG00000000000000000000000000000001',
      Body: sms.body,
    });
  });

  it('does not send an SMS twice: a 5xx or a lost answer fails after one request; a 429 is sent again', async () => {
    const sms = { to: '+15550004444', from: '+15550001111', body: 'once' };
    const sent = rest.messages.length;
    rest.failNext(503);
    expect(await engineError(sendMessage(account, sms, signal()))).toMatchObject({ status: 503, retryable: true });
    expect(rest.requests).toHaveLength(1);

    rest.dropNextMessageAnswer();
    const lost = await engineError(sendMessage(account, sms, signal()));
    expect(lost).toMatchObject({ kind: 'unavailable', retryable: true });
    expect(rest.messages.length - sent).toBe(1); // sent once at Twilio, not again

    rest.requests.length = 0;
    rest.failNext(429);
    await sendMessage(account, sms, signal());
    expect(rest.requests).toHaveLength(2);
    expect(rest.messages.length - sent).toBe(2);
  });

  it("maps Twilio's refusal of a destination to a permanent bad_request carrying status 400", async () => {
    const refused = await engineError(
      sendMessage(account, { to: UNREACHABLE, from: '+15550001111', body: 'x' }, signal()),
    );
    expect(refused).toMatchObject({ provider: 'twilio', kind: 'bad_request', status: 400, retryable: false });
    expect(refused.message).toContain('21211');
  });
});
