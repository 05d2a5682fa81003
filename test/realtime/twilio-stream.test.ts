import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { keepSessions } from '../../workers/realtime/call/keeper.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { fliteUtterance, rms, tokenFromTwiml, voicePlatformEnv, wsUrl } from '../../support/realtime/helpers.ts';

const GREETING = 'Hello! How can I help you today?';
const LONG_REPLY =
  'Our opening hours are from nine in the morning until six in the evening on weekdays. ' +
  'On Saturdays we open at ten and close at four in the afternoon. ' +
  'On Sundays and public holidays the office stays closed, but the phone line is open.';

let p: TestPlatform;
let dg: DeepgramLiveDouble;
let llm: OpenAiChatDouble;
let key: string;
let agentId: string;
/** What the caller says, per connection and utterance (the Deepgram double answers with these). */
const said = new Map<number, string[]>();

async function newCall(): Promise<{ caller: TwilioCaller; sessionId: string }> {
  const res = await p.request('/v1/sessions/twilio', {
    method: 'POST',
    key,
    json: { agentId, from: '+15550001111', to: '+15550002222' },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { twiml: string; sessionId: string };
  const caller = new TwilioCaller({
    url: wsUrl(p.url, '/v1/sessions/twilio/stream'),
    token: tokenFromTwiml(body.twiml),
  });
  await caller.start();
  return { caller, sessionId: body.sessionId };
}

async function detail(sessionId: string) {
  const r = await p.request(`/v1/observability/sessions/${sessionId}`, { key });
  // Loosely typed on purpose: the assertions below check the shape.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies read field by field in asserts
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

beforeAll(async () => {
  let conn = 0;
  const script: string[][] = [];
  dg = await startDeepgramLiveDouble({
    script: (c, u) => {
      const list = script[c] ?? [];
      const text = list[u] ?? 'Hello there.';
      said.set(c, [...(said.get(c) ?? []), text]);
      return text;
    },
  });
  // Each test registers what its caller will say before it dials.
  (globalThis as { __script?: (lines: string[]) => void }).__script = (lines) => (script[conn++] = lines);
  llm = await startOpenAiChatDouble(
    (body) => {
      const msgs = body.messages as Array<{ role: string; content: string }>;
      const last = msgs.at(-1)?.content ?? '';
      if (/hours/i.test(last)) return { text: LONG_REPLY };
      if (/keypad/i.test(last)) return { text: 'You pressed some keys.' };
      return { text: 'Sure, I can help with that.' };
    },
    { key: 'sk-test-realtime', tokensPerSecond: 1000 },
  );
  p = await startTestPlatform({
    env: voicePlatformEnv(dg, llm),
  });
  ({ apiKey: key } = await p.developer('pro'));
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: {
      name: 'Front desk',
      systemPrompt: 'You answer the phone.',
      firstMessage: GREETING,
      llmModel: 'gpt-4o-mini',
    },
  });
  expect(a.status).toBe(201);
  agentId = ((await a.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await p?.close();
  await dg?.close();
  await llm?.close();
});

const script = (lines: string[]) => (globalThis as unknown as { __script: (l: string[]) => void }).__script(lines);

describe('POST /v1/sessions/twilio', () => {
  it('returns TwiML connecting to the wss stream with a signed token, plus session metadata', async () => {
    const res = await p.request('/v1/sessions/twilio', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550001111', to: '+15550002222' },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { twiml: string; sessionId: string; streamUrl: string; expiresAt: string };
    expect(body.streamUrl).toBe('wss://voice.example.com/v1/sessions/twilio/stream');
    expect(body.sessionId).toMatch(/^ses_/);
    expect(body.twiml).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?><Response><Connect><Stream url="wss:\/\/voice\.example\.com\/v1\/sessions\/twilio\/stream"><Parameter name="token" value="eyJ[\w-]+\.[\w-]+\.[\w-]+"\/><Parameter name="sessionId" value="ses_\w+"\/><\/Stream><\/Connect><\/Response>$/,
    );
    expect(body.twiml).not.toContain(key);
    expect(new Date(body.expiresAt).getTime()).toBeGreaterThan(Date.now());
  });

  it('answers 404 for an unknown agent and 400 for a bad body', async () => {
    const r1 = await p.request('/v1/sessions/twilio', {
      method: 'POST',
      key,
      json: { agentId: 'nope', from: '1', to: '2' },
    });
    expect(r1.status).toBe(404);
    const r2 = await p.request('/v1/sessions/twilio', { method: 'POST', key, json: { agentId } });
    expect(r2.status).toBe(400);
  });
});

describe('WS /v1/sessions/twilio/stream', () => {
  it('start → the greeting as μ-law media (whole 20 ms frames, up to a second a message) and a mark; a turn; stop → completed with turns', async () => {
    script(['What can you do for me?']);
    const { caller, sessionId } = await newCall();
    await caller.until(() => caller.received.some((m) => m.event === 'mark'));
    const first = caller.received[0] as { event: string; streamSid: string; media: { payload: string } };
    expect(first.event).toBe('media');
    expect(Object.keys(first).sort()).toEqual(['event', 'media', 'streamSid']);
    expect(Object.keys(first.media)).toEqual(['payload']);
    const greetingFrames = caller.received.filter((m) => m.event === 'media');
    const sizes = greetingFrames.map((m) => Buffer.from((m as typeof first).media.payload, 'base64').length);
    for (const n of sizes) {
      expect(n % 160).toBe(0);
      expect(n).toBeLessThanOrEqual(8000);
    }
    // "Hello! How can I help you today?" takes ~2 s to say, synthesized at once: a few messages, not 50 a second.
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(8000);
    expect(greetingFrames.length).toBeLessThan(10);
    expect(caller.received.find((m) => m.event === 'mark')).toEqual({
      event: 'mark',
      streamSid: first.streamSid,
      mark: { name: 't1:0' },
    });

    await caller.until(() => !caller.playing && caller.marksEchoed.includes('t1:0'));
    const nBefore = caller.media.length;
    await caller.say(await fliteUtterance('What can you do for me?'));
    await caller.until(
      () => caller.media.length > nBefore && caller.received.filter((m) => m.event === 'mark').length >= 2,
    );
    await caller.until(() => !caller.playing);
    // While the call goes on, the keeper beats for it and never takes it for lost, even with a stale beat.
    await p.infra.db.query(`update rt_sessions set heartbeat_at = now() - interval '1 hour' where id = $1`, [
      sessionId,
    ]);
    const kept = await keepSessions(p.infra, createLogger('silent'));
    expect(kept.lost).not.toContain(sessionId);
    const beat = await p.infra.db.query<{ fresh: boolean; status: string }>(
      `select heartbeat_at > now() - interval '1 minute' as fresh, status from rt_sessions where id = $1`,
      [sessionId],
    );
    expect(beat.rows[0]).toEqual({ fresh: true, status: 'active' });
    caller.stop();
    await caller.closed;
    expect(caller.closeCode).toBe(1000);

    const d = await waitUntil(async () => {
      const r = await detail(sessionId);
      return r.body.status === 'completed' ? r : null;
    });
    expect(d.body.turns.map((t: { speaker: string }) => t.speaker)).toEqual(['assistant', 'user', 'assistant']);
    expect(d.body.turns[0].text).toBe(GREETING);
    expect(d.body.turns[1].text).toBe('What can you do for me?');
    expect(d.body.turns[2].text).toBe('Sure, I can help with that.');
    expect(d.body.turns[2].latencyMs).toBeGreaterThan(0);
    expect(d.body.metrics.totalDurationMs).toBeGreaterThan(2000);
    expect(d.body.callId).toBe(caller.call);

    // The recording: one stereo 8 kHz WAV, caller left, agent right.
    const rec = await p.request(`/v1/recordings/${caller.call}`, { key });
    expect(rec.status).toBe(200);
    expect(rec.headers.get('content-type')).toBe('audio/wav');
    const wav = Buffer.from(await rec.arrayBuffer());
    expect(wav.readUInt16LE(22)).toBe(2);
    expect(wav.readUInt32LE(24)).toBe(8000);
    const data = wav.subarray(44);
    const left = Buffer.alloc(data.length / 2);
    const right = Buffer.alloc(data.length / 2);
    for (let i = 0; i < data.length / 4; i++) {
      data.copy(left, i * 2, i * 4, i * 4 + 2);
      data.copy(right, i * 2, i * 4 + 2, i * 4 + 4);
    }
    expect(rms(left)).toBeGreaterThan(50);
    expect(rms(right)).toBeGreaterThan(50);
    // The greeting plays first, while the caller is silent.
    expect(rms(left.subarray(0, 16000))).toBeLessThan(5);
    // (the greeting starts once the session is up; the caller's audio before that is on the left as silence)
    expect(rms(right.subarray(0, 48000))).toBeGreaterThan(100);
  });

  /**
   * The first sentence of the next reply has played. Turn ids are not counted on: a reply prepared while the
   * caller paused and then dropped takes one too.
   */
  const nextReplyStarted = (caller: TwilioCaller) => {
    const n = caller.marksEchoed.length;
    return () => caller.marksEchoed.slice(n).some((m) => m.endsWith(':0'));
  };

  it('barge-in: caller speech over the agent → clear, LLM/TTS cancelled, the turn truncated to what was heard', async () => {
    script(['What are your opening hours?', 'Wait, I only need Saturday.']);
    const { caller, sessionId } = await newCall();
    await caller.until(() => caller.marksEchoed.includes('t1:0') && !caller.playing);
    const answered = nextReplyStarted(caller);
    await caller.say(await fliteUtterance('What are your opening hours?'));
    // Let the long answer play for a while, then talk over it.
    await caller.until(answered);
    expect(caller.playing).toBe(true);
    const clearsBefore = caller.clears.length;
    const answeredAgain = nextReplyStarted(caller);
    await caller.say(await fliteUtterance('Wait, I only need Saturday.'));
    await caller.until(() => caller.clears.length > clearsBefore);
    expect(caller.received.some((m) => m.event === 'clear' && Object.keys(m).length === 2)).toBe(true);
    // The barge-in utterance is the next user turn; wait until its answer has played.
    await caller.until(answeredAgain, 20_000);
    caller.stop();
    await caller.closed;
    const d = await waitUntil(async () => {
      const r = await detail(sessionId);
      return r.body.status === 'completed' ? r : null;
    });
    const answer = d.body.turns.find((t: { speaker: string; text: string; interrupted: boolean }) => t.interrupted);
    expect(answer).toBeDefined();
    expect(answer.text.length).toBeGreaterThan(0);
    expect(answer.text.length).toBeLessThan(LONG_REPLY.length);
    expect(LONG_REPLY.startsWith(answer.text.replace(/\s+\S*$/, '')), JSON.stringify(d.body.turns)).toBe(true);
    expect(d.body.interruptions).toHaveLength(1);
    const i = d.body.interruptions[0];
    expect(i.detectionMs).toBeGreaterThan(0);
    expect(i.stopMs).toBeLessThan(150);
    // The interrupted reply is what the model sees next time: the barge-in utterance became the next user turn.
    const users = d.body.turns
      .filter((t: { speaker: string }) => t.speaker === 'user')
      .map((t: { text: string }) => t.text);
    expect(users).toContain('Wait, I only need Saturday.');
    const lastReq = (llm.requests.at(-1)!.json as { messages: unknown }).messages as Array<{
      role: string;
      content: string;
    }>;
    const assistantSeen = lastReq.filter((m) => m.role === 'assistant').map((m) => m.content);
    expect(assistantSeen).toContain(answer.text);
  });

  it('backchannels over the agent do not interrupt', async () => {
    script(['What are your opening hours?', 'yeah']);
    const { caller } = await newCall();
    await caller.until(() => caller.marksEchoed.includes('t1:0') && !caller.playing);
    const answered = nextReplyStarted(caller);
    await caller.say(await fliteUtterance('What are your opening hours?'));
    await caller.until(answered);
    await caller.say(await fliteUtterance('yeah'));
    await caller.until(() => !caller.playing, 30_000);
    expect(caller.clears).toHaveLength(0);
    caller.stop();
    await caller.closed;
  });

  it('dtmf digits become a user turn the agent answers', async () => {
    script([]);
    const { caller, sessionId } = await newCall();
    await caller.until(() => caller.marksEchoed.includes('t1:0'));
    caller.dtmf('4');
    caller.dtmf('2');
    caller.dtmf('#');
    await caller.until(() => caller.marksEchoed.includes('t2:0'));
    caller.stop();
    await caller.closed;
    const d = await waitUntil(async () => {
      const r = await detail(sessionId);
      return r.body.status === 'completed' ? r : null;
    });
    expect(d.body.turns.map((t: { text: string }) => t.text)).toContain('DTMF 42#');
    expect(d.body.turns.at(-1).text).toBe('You pressed some keys.');
  });
});

describe('bad input on the stream closes cleanly', () => {
  async function raw(): Promise<TwilioCaller> {
    const c = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token: undefined });
    await c.opened;
    return c;
  }

  it('a bad token → 1008', async () => {
    const c = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token: 'v1.abc.def' });
    await c.start();
    await c.closed;
    expect(c.closeCode).toBe(1008);
    expect(c.received.filter((m) => m.event === 'media')).toHaveLength(0);
  });

  it('a replayed token → 4409 (one stream per session)', async () => {
    script([]);
    const { caller } = await newCall();
    const token = (caller as unknown as { opts: { token: string } }).opts.token;
    await caller.until(() => caller.received.length > 0);
    const again = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token });
    await again.start();
    await again.closed;
    expect(again.closeCode).toBe(4409);
    caller.stop();
    await caller.closed;
  });

  it('binary frames → 1003, malformed JSON → 1007, media before start → 1008', async () => {
    const a = await raw();
    a.sendRaw(Buffer.from([1, 2, 3]), true);
    await a.closed;
    expect(a.closeCode).toBe(1003);
    const b = await raw();
    b.sendRaw('{"event": "start", ');
    await b.closed;
    expect(b.closeCode).toBe(1007);
    const c = await raw();
    c.sendRaw(
      JSON.stringify({
        event: 'media',
        sequenceNumber: '2',
        streamSid: 'MZ1',
        media: { track: 'inbound', chunk: '1', timestamp: '0', payload: '' },
      }),
    );
    await c.closed;
    expect(c.closeCode).toBe(1008);
    const d = await raw();
    d.sendRaw(JSON.stringify({ event: 'mystery' }));
    await d.closed;
    expect(d.closeCode).toBe(1007);
    // The server is fine.
    expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
  });
});

describe('credits', () => {
  /** Spends a starter developer's whole monthly balance (50,000 credits). */
  const spendAll = async (developerId: string) =>
    (
      await p.infra.meter.reserve({
        developerId,
        category: 'tts',
        units: 50_000,
        unit: 'characters',
        provider: 'default',
        billable: true,
        requestId: `req_spend_${developerId}`,
        operation: 'synthesize',
      })
    ).commit();

  it('out of credits: an inbound call hears the operator’s message, a browser gets 402, a stream that outlived its credits closes 1011', async () => {
    const dev = await p.developer('starter');
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key: dev.apiKey,
      json: { name: 'Budget desk', systemPrompt: 'You answer.', firstMessage: GREETING, llmModel: 'gpt-4o-mini' },
    });
    const budgetAgent = ((await a.json()) as { id: string }).id;
    // Credits remain: the TwiML is issued. Then the balance is spent before Twilio connects the stream.
    const ok = await p.request('/v1/sessions/twilio', {
      method: 'POST',
      key: dev.apiKey,
      json: { agentId: budgetAgent, from: '+15550001111', to: '+15550002222' },
    });
    expect(ok.status).toBe(200);
    const session = (await ok.json()) as { twiml: string; sessionId: string };
    await spendAll(dev.developerId);

    // Issue #33: an inbound call money cannot fund hears the operator's message (TwiML), no stream, no greeting.
    const inbound = await p.request('/v1/sessions/twilio', {
      method: 'POST',
      key: dev.apiKey,
      json: { agentId: budgetAgent, from: '+15550001111', to: '+15550002222' },
    });
    expect(inbound.status).toBe(200);
    const refused = (await inbound.json()) as { twiml: string; admitted: boolean; refusal: string; sessionId: string };
    expect(refused).toMatchObject({ admitted: false, refusal: 'balance' });
    expect(refused.twiml).toMatch(/<Say>[^<]+<\/Say><Hangup\/>/);
    expect(refused.twiml).not.toMatch(/<Stream/);
    const never = (await (
      await p.request(`/v1/observability/sessions/${refused.sessionId}`, { key: dev.apiKey })
    ).json()) as { status: string; turns?: unknown[] };
    expect(never.status).toBe('failed');
    // A browser's token: 402 before any socket (the page can show it).
    const r = await p.request('/v1/sessions/direct', {
      method: 'POST',
      key: dev.apiKey,
      json: { agentId: budgetAgent },
    });
    expect(r.status).toBe(402);
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('insufficient_credits');
    expect(body.error.message).toMatch(/remain/);

    const caller = new TwilioCaller({
      url: wsUrl(p.url, '/v1/sessions/twilio/stream'),
      token: tokenFromTwiml(session.twiml),
    });
    await caller.start();
    await caller.closed;
    expect(caller.closeCode).toBe(1011);
    expect(caller.closeReason).toBe('insufficient_credits');
    expect(caller.received.filter((m) => m.event === 'media')).toHaveLength(0);
    const d = await p.request(`/v1/observability/sessions/${session.sessionId}`, { key: dev.apiKey });
    const detailBody = (await d.json()) as { status: string };
    expect(detailBody.status).toBe('failed');
  });
});

describe('observability', () => {
  it('lists sessions by agent, reports root causes and interruption quality, finds calls by CallSid', async () => {
    const list = await p.request(`/v1/observability/sessions?agentId=${agentId}`, { key });
    expect(list.status).toBe(200);
    const page = (await list.json()) as {
      data: Array<{ id: string; agentId: string; status: string; turns: number; callId: string }>;
      hasMore: boolean;
    };
    expect(page.data.length).toBeGreaterThan(0);
    for (const s of page.data) expect(s.agentId).toBe(agentId);
    const done = page.data.find((s) => s.status === 'completed' && s.turns > 0)!;
    const rc = await p.request(`/v1/observability/sessions/${done.id}/root-cause`, { key });
    expect(rc.status).toBe(200);
    expect(await rc.json()).toMatchObject({ sessionId: done.id, issues: expect.any(Array) });
    const byCall = await p.request(`/v1/observability/calls/${done.callId}`, { key });
    expect(((await byCall.json()) as { id: string }).id).toBe(done.id);
    const rcCall = await p.request(`/v1/observability/calls/${done.callId}/root-cause`, { key });
    expect(rcCall.status).toBe(200);
    const iq = await p.request(`/v1/observability/sessions/interruption-quality?agentId=${agentId}`, { key });
    expect(iq.status).toBe(200);
    const q = (await iq.json()) as { interruptions: number; stopLatencyMs: { p95: number } };
    expect(q.interruptions).toBeGreaterThanOrEqual(1);
    expect(q.stopLatencyMs.p95).toBeLessThan(150);
    const since = new Date(Date.now() - 3600_000).toISOString();
    const later = new Date(Date.now() + 3600_000).toISOString();
    const inRange = await p.request(
      `/v1/observability/sessions/interruption-quality?agentId=${agentId}&from=${since}&to=${later}`,
      { key },
    );
    expect(((await inRange.json()) as { interruptions: number }).interruptions).toBe(q.interruptions);
    const future = await p.request(`/v1/observability/sessions/interruption-quality?from=${later}`, { key });
    expect(await future.json()).toMatchObject({ interruptions: 0, sessions: 0, stopLatencyMs: { p95: null } });
    const badRange = await p.request('/v1/observability/sessions/interruption-quality?from=yesterday', { key });
    expect(badRange.status).toBe(400);
    const other = await p.developer();
    expect((await p.request(`/v1/observability/sessions/${done.id}`, { key: other.apiKey })).status).toBe(404);
    expect((await p.request(`/v1/recordings/${done.callId}`, { key: other.apiKey })).status).toBe(404);
  });
});
