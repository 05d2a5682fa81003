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
import { getAgent } from '../../shared/domains/agents/db.ts';
import { resolveSessionEngines, speechFor } from '../../shared/domains/realtime/engines.ts';
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

/** Waits for the agent's answer to the caller's turn (its row is written once all of it has played), then hangs up. */
async function answeredAndHungUp(sessionId: string, caller: TwilioCaller): Promise<void> {
  await waitUntil(async () => {
    const { rows } = await p.infra.db.query<{ n: number }>(
      `select count(*)::int as n from rt_turns where session_id = $1 and speaker = 'assistant'`,
      [sessionId],
    );
    return rows[0]!.n >= 2;
  }, 30_000);
  caller.stop();
  await caller.closed;
}

/** The session's observability record once it has completed. */
type Completed = { status: string; turns: Array<{ speaker: string; text: string; sttEngine?: string }> };

function completed(sessionId: string): Promise<Completed> {
  return waitUntil(async () => {
    const r = await p.request(`/v1/observability/sessions/${sessionId}`, { key });
    const body = (await r.json()) as Completed;
    return body.status === 'completed' ? body : null;
  });
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
    await answeredAndHungUp(sessionId, caller);

    expect(first.closeCode).toBe(1011);
    expect(dg.connections.length).toBe(connectionsBefore + 2);
    const second = dg.connections[connectionsBefore + 1]!;
    expect(second.sent.filter(isFinal).map(transcriptOf)).toEqual([LINE]);

    const d = await completed(sessionId);
    expect(d.turns.map((t) => [t.speaker, t.text])).toEqual([
      ['assistant', 'Hello!'],
      ['user', LINE],
      ['assistant', REPLY],
    ]);
    expect(d.turns.find((t) => t.speaker === 'user')!.sttEngine).toBe('deepgram');
  }, 60_000);
});

describe('STT fallback to the local recogniser (REALTIME_PHONE_STT_LOCAL_FALLBACK)', () => {
  it('a vendor that goes down mid-utterance: the local recogniser hears the utterance whole, the turn is answered, the bill follows the engine', async () => {
    const { sessionId, caller, stt: first, connectionsBefore } = await callPastGreeting();

    const speaking = caller.say(await fliteUtterance(LINE));
    await waitUntil(() => first.sent.some(isInterim), 10_000);
    // The vendor goes down: the socket drops and the reconnection is refused.
    dg.failNextHandshake(503);
    dg.dropAll(1011, 'test: vendor down');
    await speaking;
    await answeredAndHungUp(sessionId, caller);

    // Only the dropped socket reached the vendor: the refused reconnection never opened one.
    expect(dg.connections.length).toBe(connectionsBefore + 1);
    const d = await completed(sessionId);
    // The local recogniser's words (nothing is scripted for it): the utterance, heard from its start.
    const said = d.turns.filter((t) => t.speaker === 'user').map((t) => t.text);
    expect(said.join(' '), JSON.stringify(d.turns)).toMatch(/like|book|clean|appointment|next|week/i);
    expect(d.turns.at(-1)).toMatchObject({ speaker: 'assistant', text: REPLY });
    // Each caller turn says which engine heard it.
    const engines = d.turns.filter((t) => t.speaker === 'user').map((t) => t.sttEngine);
    expect(engines.length).toBeGreaterThan(0);
    expect(new Set(engines)).toEqual(new Set(['default']));

    const { rows: session } = await p.infra.db.query<{ stt_provider: string; metrics: Record<string, number> }>(
      'select stt_provider, metrics from rt_sessions where id = $1',
      [sessionId],
    );
    expect(session[0]!.stt_provider).toBe('deepgram');
    expect(session[0]!.metrics.sttEngineSwitches).toBe(1);
    expect(session[0]!.metrics.sttFallbackSeconds).toBeGreaterThan(1);
    // Two STT rows: the vendor's seconds (billable on the platform key) and the local recogniser's (never charged).
    const { rows: stt } = await p.infra.db.query<{
      provider: string;
      units: number;
      billable: boolean;
      credits: number;
    }>(
      `select provider, units::float8 as units, billable, credits::float8 as credits from credit_ledger
        where request_id = $1 and operation = 'session.stt' order by provider`,
      [sessionId],
    );
    expect(stt.map((r) => [r.provider, r.billable])).toEqual([
      ['deepgram', true],
      ['default', false],
    ]);
    expect(stt[1]!.credits).toBe(0);
    expect(stt[1]!.units).toBeGreaterThanOrEqual(Math.floor(session[0]!.metrics.sttFallbackSeconds!));
    expect(stt[0]!.units + stt[1]!.units).toBeLessThanOrEqual(Math.ceil(session[0]!.metrics.sttAudioSeconds!) + 1);
  }, 60_000);
});

describe('which phone calls get the local fallback', () => {
  it('a vendor STT call in a language the local recogniser hears (English) gets it; one in French does not', async () => {
    const dev = await p.developer('pro');
    const fallbackOf = async (language: string) => {
      const res = await p.request('/v1/agents', {
        method: 'POST',
        key: dev.apiKey,
        json: { name: 'Lang', systemPrompt: 'You answer.', firstMessage: 'Hi.', llmModel: 'gpt-4o-mini', language },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const agent = (await getAgent(p.infra.db, dev.developerId, ((await res.json()) as { id: string }).id))!;
      const engines = await resolveSessionEngines(p.infra, speechFor(p.infra), dev.developerId, agent, 'twilio');
      return [engines.sttProvider, engines.sttFallback?.engine.provider ?? null];
    };
    expect(await fallbackOf('en')).toEqual(['deepgram', 'default']);
    expect(await fallbackOf('fr')).toEqual(['deepgram', null]);
  });
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
