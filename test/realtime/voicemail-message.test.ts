import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import twilio from 'twilio';
import { startCartesiaDouble } from '../../support/doubles/cartesia.ts';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import type { HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startTwilioRestDouble, type TwilioRestDouble } from '../../support/doubles/twilio-rest.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { fliteUtterance, tokenFromTwiml, voicePlatformEnv, wsUrl } from '../../support/realtime/helpers.ts';

// Regression (issue #35, item 7): under load `leave_message` left no message: the machine was decided seconds
// into its greeting, but the message was synthesized only once the greeting ended (the beep), and the voicemail
// hung up on the silence before its audio came. The message is now rendered when the machine is decided and held
// until the greeting ends. Here the voice vendor takes 2.5 s to its first byte, the voicemail hangs up after 1.5 s
// of silence after the beep, and a busy-loop interval steals most of the event loop throughout; the detector's
// decision comes before the beep (a long greeting) or with it (a short greeting closed by the beep).

const SID = 'ACvoicemail0000000000000000000000';
const TOKEN = 'twilio-auth-token-voicemail';
const PUBLIC = 'https://voice.example.com';
const MESSAGE = 'Hi, this is the clinic. Please call us back.';

let p: TestPlatform;
let rest: TwilioRestDouble;
let dg: DeepgramLiveDouble;
let llm: OpenAiChatDouble;
let cartesia: HttpDouble;

beforeAll(async () => {
  rest = await startTwilioRestDouble({ accountSid: SID, authToken: TOKEN });
  dg = await startDeepgramLiveDouble({ script: () => 'Please leave a message.' });
  llm = await startOpenAiChatDouble(() => ({ text: 'Sure.' }), { key: 'sk-test-voicemail', tokensPerSecond: 1000 });
  cartesia = await startCartesiaDouble({ firstByteMs: 2500, msPerChar: 60 });
  p = await startTestPlatform({
    env: {
      ...voicePlatformEnv(dg, llm),
      PUBLIC_BASE_URL: PUBLIC,
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
      TWILIO_API_BASE_URL: rest.url,
      CARTESIA_BASE_URL: cartesia.url,
      CARTESIA_API_KEY: cartesia.key,
    },
  });
}, 120_000);

afterAll(async () => {
  await p?.close();
  await rest?.close();
  await dg?.close();
  await llm?.close();
  await cartesia?.close();
});

function tone(hz: number, ms: number): Buffer {
  const n = (8000 * ms) / 1000;
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(9000 * Math.sin((2 * Math.PI * hz * i) / 8000)), i * 2);
  return b;
}
const silence = (ms: number) => Buffer.alloc(((8000 * ms) / 1000) * 2);

/** An outbound call answered as Twilio answers it: the signed connect callback, then the media stream. */
async function outboundCall(key: string, agentId: string) {
  const res = await p.request('/v1/sessions/twilio/outbound', {
    method: 'POST',
    key,
    json: { agentId, from: '+15550001111', to: '+15550003333' },
  });
  expect(res.status).toBe(202);
  const { taskId } = (await res.json()) as { taskId: string };
  const index = rest.calls.length;
  await waitUntil(() => rest.calls.length > index);
  const callSid = `CA${String(index + 1).padStart(32, '0')}`;
  const path = `/v1/sessions/twilio/task/${taskId}/connect`;
  const params = { AccountSid: SID, CallSid: callSid, CallStatus: 'in-progress' };
  const connect = await fetch(p.url + path, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(TOKEN, PUBLIC + path, params),
    },
    body: new URLSearchParams(params),
  });
  expect(connect.status).toBe(200);
  const twiml = await connect.text();
  const sessionId = /name="sessionId" value="(ses_\w+)"/.exec(twiml)![1]!;
  const caller = new TwilioCaller({
    url: wsUrl(p.url, '/v1/sessions/twilio/stream'),
    token: tokenFromTwiml(twiml),
    callSid,
  });
  // Twilio ends the media stream when the platform hangs the call up through the REST API.
  rest.onUpdate = (u) => {
    if (u.callSid === callSid) caller.stop();
  };
  await caller.start();
  return { caller, sessionId };
}

/**
 * `waitMs`: the silence after the beep the voicemail waits for the message. Decided seconds before the beep, the
 * message is ready when the greeting ends; decided by the beep itself, nothing could be made earlier, and the
 * voicemail waits longer than the voice's 2.5 s.
 */
const cases = [
  {
    order: 'the decision before the beep (a long greeting)',
    waitMs: 1500,
    greeting:
      'Hi, you have reached Dana at the north side office. I cannot take your call right now. Please leave ' +
      'your name, your number and a short message after the tone, and I will call you back.',
  },
  { order: 'the decision at the beep (a short greeting)', waitMs: 6000, greeting: 'Please leave a message.' },
];

describe('leave_message on a loaded platform with a slow voice', () => {
  for (const c of cases) {
    it(`${c.order}: the message is spoken before the voicemail hangs up`, async () => {
      const { apiKey: key } = await p.developer('pro');
      const a = await p.request('/v1/agents', {
        method: 'POST',
        key,
        json: {
          name: 'Reminder',
          llmModel: 'gpt-4o-mini',
          firstMessage: 'Hello, this is the clinic calling.',
          ttsProvider: 'cartesia',
          voiceId: 'cartesia-voice',
          voicemail: { action: 'leave_message', message: MESSAGE },
        },
      });
      expect(a.status).toBe(201);
      const agentId = ((await a.json()) as { id: string }).id;
      const greeting = await fliteUtterance(c.greeting);
      const { caller, sessionId } = await outboundCall(key, agentId);
      // The event loop is mostly someone else's: 80 ms of every 100 ms busy.
      const thief = setInterval(() => {
        const until = Date.now() + 80;
        while (Date.now() < until);
      }, 100);
      try {
        const greetingEnd = await caller.say(Buffer.concat([greeting, silence(300), tone(1000, 500)]));
        // The voicemail records: it hangs up after `waitMs` of silence, unless the message has begun.
        for (let ms = 0; ms < c.waitMs && caller.media.length === 0; ms += 100) await caller.say(silence(100));
        if (caller.media.length === 0) caller.stop();
        await caller.closed;
        // Nothing was played over the greeting.
        for (const m of caller.media) expect(m.at).toBeGreaterThan(greetingEnd - 600);
      } finally {
        clearInterval(thief);
      }
      expect(caller.media.reduce((n, m) => n + m.bytes, 0)).toBeGreaterThan(8000);
      await waitUntil(async () => {
        const { rows } = await p.infra.db.query('select status from rt_sessions where id = $1', [sessionId]);
        return rows[0]?.status === 'completed';
      }, 20_000);
      const { rows } = await p.infra.db.query(
        'select end_reason, answered_by, beep_at_ms from rt_sessions where id = $1',
        [sessionId],
      );
      expect(rows[0]).toMatchObject({ end_reason: 'voicemail-left', answered_by: 'machine' });
      expect(rows[0].beep_at_ms).toBeGreaterThan(0);
      const d = (await (await p.request(`/v1/observability/sessions/${sessionId}`, { key })).json()) as {
        turns: Array<{ speaker: string; text: string }>;
      };
      expect(d.turns.filter((t) => t.speaker === 'assistant').map((t) => t.text)).toEqual([MESSAGE]);
    }, 120_000);
  }
});
