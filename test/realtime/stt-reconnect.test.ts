import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
  type LiveConnection,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { fliteUtterance, tokenFromTwiml, voicePlatformEnv, wsUrl } from '../../support/realtime/helpers.ts';

/**
 * A streaming STT socket that drops while the caller speaks (the Deepgram double closes it with 1011 after its
 * first interim result) is reconnected: the audio it had not finalized, and what arrived meanwhile, goes to the
 * new socket, so the turn completes with what the caller said and the agent answers it.
 */
const LINE = 'I would like to book a cleaning appointment for next week.';
const REPLY = 'Of course, which day suits you?';

let p: TestPlatform;
let dg: DeepgramLiveDouble;
let llm: OpenAiChatDouble;
let key: string;
let agentId: string;

beforeAll(async () => {
  dg = await startDeepgramLiveDouble({ script: () => LINE });
  llm = await startOpenAiChatDouble(() => ({ text: REPLY }), { key: 'sk-test-reconnect', tokensPerSecond: 1000 });
  p = await startTestPlatform({ env: voicePlatformEnv(dg, llm) });
  ({ apiKey: key } = await p.developer('pro'));
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Desk', systemPrompt: 'You book appointments.', firstMessage: 'Hello!', llmModel: 'gpt-4o-mini' },
  });
  agentId = ((await a.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await p?.close();
  await dg?.close();
  await llm?.close();
});

const isFinal = (m: Record<string, unknown>) => m.type === 'Results' && m.is_final === true;
const isInterim = (m: Record<string, unknown>) => m.type === 'Results' && m.is_final === false;
const transcriptOf = (m: Record<string, unknown>) =>
  (m as { channel: { alternatives: Array<{ transcript: string }> } }).channel.alternatives[0]!.transcript;

/** A phone call whose greeting has played, with the STT connection it opened. */
async function callPastGreeting(): Promise<{
  sessionId: string;
  caller: TwilioCaller;
  stt: LiveConnection;
  connectionsBefore: number;
}> {
  const res = await p.request('/v1/sessions/twilio', {
    method: 'POST',
    key,
    json: { agentId, from: '+15550001111', to: '+15550002222' },
  });
  const { twiml, sessionId } = (await res.json()) as { twiml: string; sessionId: string };
  const connectionsBefore = dg.connections.length;
  const caller = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token: tokenFromTwiml(twiml) });
  await caller.start();
  await caller.until(() => caller.marksEchoed.length > 0 && !caller.playing, 20_000);
  return { sessionId, caller, stt: dg.connections[connectionsBefore]!, connectionsBefore };
}

describe('streaming STT reconnection', () => {
  it('a socket dropped mid-utterance is reopened with the unfinalized audio; the turn completes with the right text', async () => {
    const { sessionId, caller, stt: first, connectionsBefore } = await callPastGreeting();

    const speaking = caller.say(await fliteUtterance(LINE));
    // Mid-utterance: the STT has heard some of it (an interim result) and finalized none of it.
    await waitUntil(() => first.sent.some(isInterim), 10_000);
    expect(first.sent.some(isFinal)).toBe(false);
    dg.dropAll(1011, 'test: socket dropped');
    await speaking;
    // The reply's row is written once all of it has played (its marks came back).
    await waitUntil(async () => {
      const { rows } = await p.infra.db.query<{ n: number }>(
        `select count(*)::int as n from rt_turns where session_id = $1 and speaker = 'assistant'`,
        [sessionId],
      );
      return rows[0]!.n >= 2;
    }, 20_000);
    caller.stop();
    await caller.closed;

    expect(first.closeCode).toBe(1011);
    expect(dg.connections.length).toBe(connectionsBefore + 2);
    const second = dg.connections[connectionsBefore + 1]!;
    expect(second.sent.filter(isFinal).map(transcriptOf)).toEqual([LINE]);

    const d = await waitUntil(async () => {
      const r = await p.request(`/v1/observability/sessions/${sessionId}`, { key });
      const body = (await r.json()) as { status: string; turns: Array<{ speaker: string; text: string }> };
      return body.status === 'completed' ? body : null;
    });
    expect(d.turns.map((t) => [t.speaker, t.text])).toEqual([
      ['assistant', 'Hello!'],
      ['user', LINE],
      ['assistant', REPLY],
    ]);
  }, 60_000);
});

describe('streaming STT writes during silence', () => {
  it('after a long quiet the silence goes in 100 ms pieces; speech flushes it and goes at once, and is heard whole', async () => {
    const { sessionId, caller, stt: conn } = await callPastGreeting();
    // Three seconds of line silence (the caller sends it every 20 ms, as Twilio does), well past the quiet point.
    await new Promise((r) => setTimeout(r, 1600));
    const before = { bytes: conn.audioBytes, messages: conn.audioMessages };
    await new Promise((r) => setTimeout(r, 3000));
    const bytes = conn.audioBytes - before.bytes;
    const messages = conn.audioMessages - before.messages;
    // All of it arrived (8 kHz, 16-bit: 16 bytes a ms), in about 30 writes instead of 150.
    expect(bytes).toBeGreaterThan(2500 * 16);
    expect(messages).toBeLessThan(45);
    expect(messages).toBeGreaterThan(15);
    // Speech after the quiet is heard whole and answered.
    await caller.say(await fliteUtterance(LINE));
    await waitUntil(async () => {
      const { rows } = await p.infra.db.query<{ text: string }>(
        `select text from rt_turns where session_id = $1 and speaker = 'user'`,
        [sessionId],
      );
      return rows.some((r) => r.text === LINE);
    }, 20_000);
    caller.stop();
    await caller.closed;
  }, 60_000);
});
