import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetHeadroom, refusalTwiml } from '../../shared/domains/realtime/admission.ts';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { tokenFromTwiml, voicePlatformEnv, wsUrl } from '../../support/realtime/helpers.ts';

let p: TestPlatform;
let dg: DeepgramLiveDouble;
let llm: OpenAiChatDouble;
let key: string;
let agentId: string;

beforeAll(async () => {
  dg = await startDeepgramLiveDouble({ script: () => 'Hello.' });
  llm = await startOpenAiChatDouble(() => ({ text: 'Hi.' }), { key: 'sk-admission', tokensPerSecond: 1000 });
  p = await startTestPlatform({
    roles: ['api', 'realtime'],
    env: {
      ...voicePlatformEnv(dg, llm),
      REALTIME_MAX_SESSIONS: '1',
      REALTIME_ADMISSION_RETRY_AFTER_SECONDS: '7',
      REALTIME_RECORDINGS: 'false',
    },
  });
  ({ apiKey: key } = await p.developer('pro'));
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Desk', firstMessage: 'Hello, how can I help?', llmModel: 'gpt-4o-mini' },
  });
  agentId = ((await a.json()) as { id: string }).id;
  // The realtime process has registered its capacity with the fleet.
  await waitUntil(async () => (await fleetHeadroom(p.infra)) === 1);
}, 120_000);

afterAll(async () => {
  await p?.close();
  await dg?.close();
  await llm?.close();
});

async function twilioSession() {
  const r = await p.request('/v1/sessions/twilio', {
    method: 'POST',
    key,
    json: { agentId, from: '+15550001111', to: '+15550002222' },
  });
  expect(r.status).toBe(200);
  return (await r.json()) as { sessionId: string; twiml: string; admitted?: boolean };
}

/** The HTTP answer to a WebSocket upgrade that the server refuses. */
function refusedUpgrade(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => reject(new Error('the upgrade was accepted')));
    ws.on('unexpected-response', (_req, res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: res.headers['retry-after'] as string | undefined,
          body: Buffer.concat(parts).toString('utf8'),
        }),
      );
    });
    ws.on('error', () => {});
  });
}

describe('admission control', () => {
  it('past capacity, Twilio calls get busy TwiML and direct sessions a 503 with Retry-After; a freed slot admits again', async () => {
    const first = await twilioSession();
    expect(first.admitted).toBeUndefined();
    const caller = new TwilioCaller({
      url: wsUrl(p.url, '/v1/sessions/twilio/stream'),
      token: tokenFromTwiml(first.twiml),
    });
    await caller.start();
    await caller.until(() => caller.media.length > 0, 20_000);

    // The fleet (one process, capacity 1) is full.
    const second = await twilioSession();
    expect(second.admitted).toBe(false);
    expect(second.twiml).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Reject reason="busy"/></Response>');
    const refused = await p.request(`/v1/observability/sessions/${second.sessionId}`, { key });
    expect(((await refused.json()) as { status: string }).status).toBe('failed');

    const direct = await p.request('/v1/sessions/direct', { method: 'POST', key, json: { agentId } });
    expect(direct.status).toBe(503);
    expect(direct.headers.get('retry-after')).toBe('7');
    expect(((await direct.json()) as { error: { code: string } }).error.code).toBe('over_capacity');

    // The running session shows in this process's load: a direct socket is refused before the upgrade.
    await waitUntil(async () => /realtime_headroom_sessions 0/.test(await (await fetch(`${p.url}/metrics`)).text()));
    const ws = await refusedUpgrade(wsUrl(p.url, `/v1/agents/${agentId}/session`), { authorization: `Bearer ${key}` });
    expect(ws).toMatchObject({ status: 503, retryAfter: '7' });
    expect(JSON.parse(ws.body)).toMatchObject({ error: { code: 'over_capacity', type: 'service_unavailable_error' } });
    const metrics = await (await fetch(`${p.url}/metrics`)).text();
    expect(metrics).toMatch(/realtime_capacity_sessions 1/);
    expect(metrics).toMatch(/realtime_admission_refused_total\{transport="twilio"\} 1/);

    // The running call was not disturbed, and once it hangs up its slot is free again.
    expect(caller.closeCode).toBeNull();
    caller.stop();
    await caller.closed;
    await waitUntil(async () => (await fleetHeadroom(p.infra)) === 1);
    const third = await twilioSession();
    expect(third.twiml).toContain('<Connect><Stream');
  });

  it('the refusal can be a short message then a hang-up, and an answered outbound call is never <Reject>ed', () => {
    const message = { ...p.config, REALTIME_ADMISSION_ANSWER: 'message' as const };
    expect(refusalTwiml(message)).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Say>${p.config.REALTIME_ADMISSION_MESSAGE}</Say><Hangup/></Response>`,
    );
    // Answered (the callee picked up): never a bare hang-up into silence, whatever the setting.
    expect(refusalTwiml(p.config, { answered: true })).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Say>${p.config.REALTIME_ADMISSION_MESSAGE}</Say><Hangup/></Response>`,
    );
  });
});
