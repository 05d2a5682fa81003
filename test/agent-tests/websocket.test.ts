import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenarioFile, type Scenario } from '../../shared/contracts/agent-tests.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { PlatformSlot } from '../../shared/domains/agent-tests/platform-slot.ts';
import { allChecks } from '../../shared/domains/agent-tests/results.ts';
import { runSuite } from '../../shared/domains/agent-tests/suite.ts';
import { startPlatform } from '../../scripts/platform.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { FAST_PLAYOUT } from '../../support/realtime/fast-line.ts';

/**
 * `transport: websocket`: a scenario's call over the direct protocol (POST /v1/sessions/direct's token, 16 kHz PCM
 * both ways, marks echoed as played, `clear` honoured) on the same private platform a run uses (scripted LLM), the
 * caller heard by the local default STT (pocketsphinx, a real recogniser). A two-turn scenario runs end to end;
 * one with bargeInAfterMs cuts the agent's long reply short; a versioned run calls that version over the socket;
 * an agent naming a vendor STT is heard by the simulated STT instead.
 */
let p: TestPlatform;
let slot: PlatformSlot;
let key: string;
let agentId: string;

beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api'],
    env: { PUBLIC_BASE_URL: 'https://voice.example.com', OUTBOUND_ALLOWLIST: '127.0.0.1' },
  });
  ({ apiKey: key } = await p.developer('pro'));
  const r = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Web desk', firstMessage: 'Hello, thanks for calling.' },
  });
  expect(r.status).toBe(201);
  agentId = ((await r.json()) as { id: string }).id;
  const log = createLogger('silent');
  slot = await PlatformSlot.open(
    (c) => startPlatform(c, log, ['api', 'realtime']),
    p.config,
    p.infra.embeddedS3?.endpoint ?? null,
  );
}, 60_000);

afterAll(async () => {
  await slot?.close();
  await p?.close();
});

/**
 * The agent's audio plays faster than real time at the caller (support/realtime/fast-line.ts); the runner keeps a
 * scenario about timing (the barge-in below, backchannels) on real time, and the caller always speaks in real time.
 */
const fast = { playout: FAST_PLAYOUT };

const run = (scenario: Scenario) =>
  runSuite({ apiKey: key, agentId }, [{ file: 'ws.yaml', scenario }], (s) => slot.forScenario(s, 'local'), fast);

describe('agent tests over the direct WebSocket protocol', () => {
  it('runs a two-turn scenario end to end: greeting, replies, pocketsphinx heard the caller, waterfall, recording', async () => {
    const [scenario] = parseScenarioFile(
      [
        'name: web caller asks twice',
        'transport: websocket',
        "llm: {replies: ['We open at nine on Saturday.', 'On Sunday we are closed.']}",
        'turns:',
        '  - say: "Hello, are you open on Saturday morning?"',
        '    expect: {replyMatches: "(?i)saturday"}',
        '  - say: "And what about Sunday?"',
        '    expect: {replyMatches: "(?i)sunday"}',
        'expect: {replyMatches: "(?i)thanks for calling", endedBy: caller, maxCredits: 0}',
      ].join('\n'),
      'ws.yaml',
    );
    const [r] = await run(scenario!);
    expect(r!.error).toBeNull();
    expect(allChecks(r!).filter((c) => !c.passed)).toEqual([]);
    expect(r!).toMatchObject({ passed: true, transport: 'websocket', mode: 'offline', costCredits: 0 });
    expect(r!.stt).toMatch(/^pocketsphinx \(local/);
    expect(r!.llm).toMatch(/^scripted/);
    expect(r!.endReason).toBe('caller-hangup');
    // The real recogniser heard something of each turn (what, is its own business: flite's voice at 8 kHz).
    expect(r!.turns.map((t) => t.heard.length > 0)).toEqual([true, true]);
    expect(r!.turns[0]!.reply).toMatch(/nine on Saturday/);
    expect(r!.turns[1]!.reply).toMatch(/Sunday we are closed/);
    expect(r!.turns.every((t) => t.latencyMs !== null && t.latencyMs > 0)).toBe(true);
    expect(r!.transcript[0]).toMatchObject({ text: 'Hello, thanks for calling.' });
    // The waterfall: both answers to the caller with their latency.
    expect(r!.waterfall.filter((t) => t.speaker === 'assistant' && t.latencyMs !== undefined).length).toBe(2);
    // The direct session's recording (no CallSid: addressed by the session id), to its owner.
    expect(r!.recordingUrl).toBe(`/v1/recordings/${r!.sessionId}`);
    const rec = await fetch(`${(await slot.forScenario(scenario!, 'local')).url}${r!.recordingUrl}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(rec.status).toBe(200);
    expect(rec.headers.get('content-type')).toBe('audio/wav');
    // Read to its end: a response left unread holds its connection open, and the slot's platform's close waits for
    // it (2-22 s).
    expect(Buffer.from(await rec.arrayBuffer()).toString('latin1', 0, 4)).toBe('RIFF');
  }, 120_000);

  it('a barge-in over the socket: the agent is cut short (clear) and answers the new turn', async () => {
    const [scenario] = parseScenarioFile(
      JSON.stringify({
        name: 'web caller cuts in',
        transport: 'websocket',
        impairments: { noiseSnrDb: 30, packetLossPct: 2, jitterMs: 20, seed: 3 },
        llm: {
          replies: [
            'We are open from nine in the morning until five in the afternoon, every weekday, and we are closed at weekends and on public holidays.',
            'Yes, we are closed on public holidays.',
          ],
        },
        turns: [
          { say: 'When are you open?' },
          { say: 'Sorry, and on holidays?', bargeInAfterMs: 1500, expect: { replyMatches: '(?i)holidays' } },
        ],
      }),
      'ws.json',
    );
    const [r] = await run(scenario!);
    expect(r!.error).toBeNull();
    expect(r!.passed).toBe(true);
    // The long answer was interrupted: the platform recorded it cut short, as the caller heard it (a beginning of it).
    const full = String(scenario!.llm!.replies[0]);
    const long = r!.waterfall[2]!;
    expect(long).toMatchObject({ speaker: 'assistant', interrupted: true });
    expect(long.text.length).toBeGreaterThan(0);
    expect(long.text.length).toBeLessThan(full.length);
    expect(full.startsWith(long.text.replace(/[.…]+$/, ''))).toBe(true);
    expect(r!.turns[0]!.reply).toBe(long.text);
    expect(r!.turns[1]!.reply).toMatch(/public holidays/);
    // The seeded bad line applied to the socket's PCM frames too.
    expect(r!.lostFrames).toBeGreaterThan(0);
  }, 120_000);

  it('calls the agent version a run names over the socket too (direct sessions take agentVersion)', async () => {
    const put = await p.request(`/v1/agents/${agentId}`, {
      method: 'PUT',
      key,
      json: { firstMessage: 'Good morning, this is the new web desk.' },
    });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { version: number }).version).toBe(2);
    const scenario: Scenario = {
      name: 'version 1 greets',
      callerVoice: 'kal',
      transport: 'websocket',
      llm: { replies: ['Okay.'] },
      turns: [{ say: 'Hello?' }],
      expect: { replyMatches: '(?i)thanks for calling' },
    };
    const [r] = await runSuite(
      { apiKey: key, agentId, agentVersion: 1 },
      [{ file: 'v.json', scenario }],
      (s) => slot.forScenario(s, 'local'),
      fast,
    );
    expect(r!.error).toBeNull();
    expect(r!.transcript[0]).toMatchObject({ text: 'Hello, thanks for calling.' });
    expect(r!.passed).toBe(true);
    // A version the agent does not have is refused before any socket opens.
    const missing = await p.request('/v1/sessions/direct', { method: 'POST', key, json: { agentId, agentVersion: 9 } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { param: string } }).error.param).toBe('agentVersion');
  }, 120_000);

  it('an agent naming a vendor STT is heard by the simulated STT on the socket, never the vendor', async () => {
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'Vendor ears', firstMessage: 'Hi there.', metadata: { sttProvider: 'assemblyai' } },
    });
    expect(a.status).toBe(201);
    const vendorEars = ((await a.json()) as { id: string }).id;
    const said = 'I would like to book a cleaning on Friday';
    const scenario: Scenario = {
      name: 'simulated ears',
      callerVoice: 'slt',
      transport: 'websocket',
      llm: { replies: ['Friday works.'] },
      turns: [{ say: said, expect: { replyMatches: 'Friday works' } }],
    };
    const [r] = await runSuite(
      { apiKey: key, agentId: vendorEars },
      [{ file: 'v.json', scenario }],
      (s) => slot.forScenario(s, 'local'),
      fast,
    );
    expect(r!.error).toBeNull();
    expect(r!.stt).toMatch(/^simulated/);
    expect(r!.turns[0]!.heard.replace(/[.?!]$/, '').toLowerCase()).toBe(said.toLowerCase());
    expect(r!.passed).toBe(true);
  }, 120_000);

  it('backchannels and clipping over the socket: the agent talks through the hums', async () => {
    // Streaming ears (an agent naming a vendor STT: the simulated one on a test platform) hear each hum as said, so
    // the barge-in rule sees a backchannel. (With the local batch STT a hum is heard only when it ends, and
    // pocketsphinx may hear "uh-huh" as a word such as "op", which then interrupts: docs/agent-tests.md, Limits.)
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'Listening desk', firstMessage: 'Hi there.', metadata: { sttProvider: 'deepgram' } },
    });
    expect(a.status).toBe(201);
    const listening = ((await a.json()) as { id: string }).id;
    const [scenario] = parseScenarioFile(
      JSON.stringify({
        name: 'web caller listens',
        transport: 'websocket',
        impairments: { clipPct: 5, backchannels: { everyMs: 1500, words: ['mm-hmm', 'uh-huh'] }, seed: 4 },
        llm: {
          replies: [
            'We are open from nine in the morning until five in the afternoon on weekdays, from ten until two on Saturdays, and we are closed on Sundays and on public holidays.',
            'Goodbye.',
          ],
        },
        turns: [{ say: 'When are you open?' }, { say: 'Thank you, goodbye.' }],
        expect: { ignoresBackchannels: true },
      }),
      'ws.json',
    );
    const [r] = await runSuite({ apiKey: key, agentId: listening }, [{ file: 'ws.json', scenario: scenario! }], (s) =>
      slot.forScenario(s, 'local'),
    );
    expect(r!.error).toBeNull();
    expect(r!.transport).toBe('websocket');
    expect(r!.backchannels.length).toBeGreaterThanOrEqual(2);
    expect(r!.backchannels.filter((b) => b.interrupted || b.tookTurn)).toEqual([]);
    expect(r!.turns[0]!.reply).toMatch(/public holidays/);
    expect(r!.turns[1]!.heard).toMatch(/^thank you, goodbye\.?$/i);
    expect(r!.passed).toBe(true);
  }, 120_000);
});
