import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTwilioRestDouble, type TwilioRestDouble } from '../../support/doubles/twilio-rest.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

const SID = 'ACtest0000000000000000000000000000';
const TOKEN = 'twilio-auth-token-test';
const PUBLIC = 'https://voice.example.com';

let p: TestPlatform;
let rest: TwilioRestDouble;
let key: string;
let agentId: string;

beforeAll(async () => {
  rest = await startTwilioRestDouble({ accountSid: SID, authToken: TOKEN });
  p = await startTestPlatform({
    env: {
      PUBLIC_BASE_URL: PUBLIC,
      REALTIME_SESSION_SECRET: 'outbound-secret-outbound-secret-0123456789',
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
      TWILIO_API_BASE_URL: rest.url,
      DEEPGRAM_API_KEY: 'dg-key',
      OPENAI_API_KEY: 'sk-x',
    },
  });
  ({ apiKey: key } = await p.developer('pro'));
  const a = await p.request('/v1/agents', { method: 'POST', key, json: { name: 'Caller', llmModel: 'gpt-4o-mini' } });
  agentId = ((await a.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await p?.close();
  await rest?.close();
});

function signedPost(path: string, params: Record<string, string>, signature?: string) {
  const sig = signature ?? twilio.getExpectedTwilioSignature(TOKEN, PUBLIC + path, params);
  return fetch(p.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': sig },
    body: new URLSearchParams(params),
  });
}

describe('Twilio request signatures', () => {
  it('match the known vector with the SDK validateRequest', () => {
    const params = {
      CallSid: 'CA1234567890ABCDE',
      Caller: '+12349013030',
      Digits: '1234',
      From: '+12349013030',
      To: '+18005551212',
    };
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    expect(twilio.validateRequest('12345', '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', url, params)).toBe(true);
    expect(twilio.validateRequest('12345', '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', url, { ...params, Digits: '1235' })).toBe(
      false,
    );
  });
});

describe('outbound calls', () => {
  it('the dispatcher places the call through the REST API; callbacks verify the signature and connect the agent', async () => {
    rest.failNext(503); // a 503 is retried by the job
    const res = await p.request('/v1/sessions/twilio/outbound', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550001111', to: '+15550003333' },
    });
    expect(res.status).toBe(202);
    const { taskId } = (await res.json()) as { taskId: string };
    await waitUntil(() => rest.calls.length === 1);
    const form = rest.calls[0]!;
    expect(form.get('To')).toBe('+15550003333');
    expect(form.get('From')).toBe('+15550001111');
    expect(form.get('Url')).toBe(`${PUBLIC}/v1/sessions/twilio/task/${taskId}/connect`);
    expect(form.get('StatusCallback')).toBe(`${PUBLIC}/v1/sessions/twilio/task/${taskId}/status`);
    expect(form.getAll('StatusCallbackEvent')).toEqual(['initiated', 'ringing', 'answered', 'completed']);

    const params = { CallSid: 'CA00000000000000000000000000000001', CallStatus: 'in-progress', AccountSid: SID };
    const bad = await signedPost(`/v1/sessions/twilio/task/${taskId}/connect`, params, 'bm90IGEgc2lnbmF0dXJl');
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_signature');
    const unsigned = await fetch(`${p.url}/v1/sessions/twilio/task/${taskId}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params),
    });
    expect(unsigned.status).toBe(401);

    const ok = await signedPost(`/v1/sessions/twilio/task/${taskId}/connect`, params);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('text/xml');
    const twiml = await ok.text();
    expect(twiml).toContain('<Stream url="wss://voice.example.com/v1/sessions/twilio/stream">');
    expect(twiml).toMatch(/<Parameter name="token" value="eyJ[\w-]+\.[\w-]+\.[\w-]+"/);

    const st = await signedPost(`/v1/sessions/twilio/task/${taskId}/status`, { ...params, CallStatus: 'completed' });
    expect(st.status).toBe(204);
    const { rows } = await p.infra.db.query(
      'select status, call_sid, session_id from rt_outbound_tasks where id = $1',
      [taskId],
    );
    expect(rows[0]).toMatchObject({ status: 'completed', call_sid: 'CA00000000000000000000000000000001' });
    expect(rows[0].session_id).toMatch(/^ses_/);
    const unknown = await signedPost('/v1/sessions/twilio/task/tsk_nope/status', params);
    expect(unknown.status).toBe(404);
  });
});
