import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePattern, parseScenarioFile, ScenarioFileError } from '../../shared/contracts/agent-tests.ts';
import {
  callerSpeech,
  decodeLeg,
  fliteUtterance,
  segments,
  turnSpeech,
} from '../../shared/domains/agent-tests/caller-speech.ts';
import { encodeWav, wavHeader } from '../../shared/kernel/audio/wav.ts';
import { clipFor, hardClip, lineImpairment, speechRms } from '../../shared/domains/agent-tests/impairments.ts';
import { mulawToPcm, pcmToMulaw } from '../../shared/kernel/audio/mulaw.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/** The scenario format (YAML and JSON, `(?i)` patterns), its served JSON Schema, and the seeded bad line. */
const ISSUE_EXAMPLE = `
name: asks for Saturday hours
transport: twilio
llm:
  replies: ["We open at nine.", {tool: lookup_hours, args: {day: saturday}}, "Saturday we close at noon."]
impairments: {noiseSnrDb: 20, packetLossPct: 2, jitterMs: 30, seed: 7}
turns:
  - say: "Hi, are you open on Saturday morning?"
    pauseAfterWords: {3: 500}
    expect: {replyMatches: "(?i)saturday", noCutIn: true, maxLatencyMs: 1200}
  - say: "Wait, what about Sunday?"
    bargeInAfterMs: 800
expect: {toolCalled: {name: lookup_hours}, replyNeverMatches: "(?i)price", endedBy: caller, maxCredits: 20}
`;

describe('scenario files', () => {
  it("reads the issue's example, YAML or JSON, one scenario or a list", () => {
    const [s] = parseScenarioFile(ISSUE_EXAMPLE);
    expect(s!.llm!.replies[1]).toEqual({ tool: 'lookup_hours', args: { day: 'saturday' } });
    expect(s!.turns[0]!.pauseAfterWords).toEqual({ 3: 500 });
    expect(segments(s!.turns[0]!)).toEqual([
      { words: ['Hi,', 'are', 'you'], pauseMs: 500 },
      { words: ['open', 'on', 'Saturday', 'morning?'], pauseMs: 0 },
    ]);
    const json = JSON.stringify({ scenarios: [{ name: 'a', turns: [{ say: 'hello' }] }] });
    expect(parseScenarioFile(json)).toEqual([
      { name: 'a', transport: 'twilio', callerVoice: 'kal', turns: [{ say: 'hello' }] },
    ]);
    expect(parseScenarioFile(JSON.stringify([{ name: 'a', turns: [{ say: 'x' }] }]))).toHaveLength(1);
  });

  it('takes a caller leg as audio (a URL, a file or a stored key) instead of words, and refuses both or neither', async () => {
    const [s] = parseScenarioFile(`
name: replayed leg
turns:
  - audio: {key: "dev/recordings/s1/caller.wav", startMs: 100, endMs: 300, transcript: "hello there"}
`);
    expect(s!.turns[0]!.audio).toMatchObject({ key: 'dev/recordings/s1/caller.wav', format: 'wav' });
    expect(() => parseScenarioFile('name: a\nturns: [{say: hi, audio: {file: a.wav}}]')).toThrow(/exactly one of say/);
    expect(() => parseScenarioFile('name: a\nturns: [{audio: {file: a.wav, url: "https://x.test/a.wav"}}]')).toThrow(
      /exactly one of url, file or key/,
    );
    expect(() => parseScenarioFile('name: a\nturns: [{}]')).toThrow(/exactly one of say/);
    // A 16 kHz PCM WAV and the same tone as 8 kHz μ-law WAV both become the 8 kHz leg, cut to its range.
    const tone = Buffer.alloc(16000 * 2);
    for (let i = 0; i < 16000; i++) tone.writeInt16LE(Math.round(8000 * Math.sin(i / 5)), i * 2);
    const leg = decodeLeg(encodeWav(tone, 16000), { format: 'wav', startMs: 100, endMs: 300 });
    expect(leg.length).toBe(200 * 16);
    const mu = pcmToMulaw(Buffer.alloc(8000 * 2, 1));
    const header = wavHeader({ sampleRate: 8000, bitsPerSample: 8 }, mu.length);
    header.writeUInt16LE(7, 20); // WAVE_FORMAT_MULAW
    const muWav = Buffer.concat([header, mu]);
    const speech = await turnSpeech(s!.turns[0]!, async () => muWav);
    expect(speech.script).toBe('hello there');
    expect(speech.pcm.length).toBe(200 * 16);
  });

  it('reads a leading (?i) as case-insensitive (RE2 inline flags)', () => {
    expect(compilePattern('(?i)price').test('Our PRICES')).toBe(true);
    expect(compilePattern('price').test('Our PRICES')).toBe(false);
    expect(() => compilePattern('(?x)a')).toThrow(/unsupported inline flags/);
  });

  it('names the bad field', () => {
    const bad = (text: string) => {
      try {
        parseScenarioFile(text, 'f.yaml');
      } catch (e) {
        expect(e).toBeInstanceOf(ScenarioFileError);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad('name: x\nturns: []')).toMatch(/^f\.yaml: turns: /);
    expect(bad('name: x\nturns: [{say: hi, expect: {replyMatches: "(?i)("}}]')).toMatch(
      /turns\.0\.expect\.replyMatches: not a valid pattern/,
    );
    expect(bad('name: x\ntransport: sip\nturns: [{say: hi}]')).toMatch(/transport/);
    expect(bad('name: x\nturns: [{say: hi, pauseAfterWords: {first: 200}}]')).toMatch(/pauseAfterWords/);
    expect(bad('name: [unclosed')).toMatch(/not YAML or JSON/);
    expect(bad('name: x\ncallerVoice: alloy\nturns: [{say: hi}]')).toMatch(/callerVoice/);
  });

  it("speaks in the scenario's flite voice: kal by default, another when named", async () => {
    const [byDefault, named] = parseScenarioFile(
      '[{name: a, turns: [{say: hi}]}, {name: b, callerVoice: slt, turns: [{say: hi}]}]',
      'v.yaml',
    );
    expect(byDefault!.callerVoice).toBe('kal');
    expect(named!.callerVoice).toBe('slt');
    const said = 'What time do you open on Saturday?';
    const [kal, slt] = await Promise.all([fliteUtterance(said, 'kal'), fliteUtterance(said, 'slt')]);
    // Both are 8 kHz speech of some length, and not the same voice (different samples, different lengths).
    expect(kal.length).toBeGreaterThan(8000);
    expect(slt.length).toBeGreaterThan(8000);
    expect(kal.equals(slt)).toBe(false);
  });
});

describe('seeded bad line', () => {
  const frames = Array.from({ length: 400 }, (_, i) => {
    const pcm = Buffer.alloc(320);
    for (let k = 0; k < 160; k++) pcm.writeInt16LE(Math.round(3000 * Math.sin((i * 160 + k) / 5)), k * 2);
    return pcmToMulaw(pcm);
  });
  const run = (seed: number) => {
    const line = lineImpairment({ noiseSnrDb: 20, packetLossPct: 10, jitterMs: 40, seed }, 2121, {
      mulawToPcm,
      pcmToMulaw,
    });
    return { fates: frames.map((f) => line.apply(f)), lost: line.lost };
  };

  it('repeats exactly with the same seed and differs with another', () => {
    const a = run(7);
    const b = run(7);
    const c = run(8);
    expect(a.fates).toEqual(b.fates);
    expect(a.fates.map((f) => f.delayMs)).not.toEqual(c.fates.map((f) => f.delayMs));
    // 10 % of 400 frames, give or take what a seeded draw gives.
    expect(a.lost).toBeGreaterThan(15);
    expect(a.lost).toBeLessThan(70);
    expect(Math.max(...a.fates.map((f) => f.delayMs))).toBeLessThanOrEqual(40);
    // Noise changed the frames that went through.
    const kept = a.fates.findIndex((f) => f.frame);
    expect(a.fates[kept]!.frame!.equals(frames[kept]!)).toBe(false);
  });
});

describe('clipping (impairments.clipPct)', () => {
  /** Two seconds of a voice-like tone: a 200 Hz tone whose loudness swells and fades like syllables. */
  const voice = Buffer.alloc(16000 * 2);
  for (let i = 0; i < 16000; i++) {
    const env = 0.15 + 0.85 * Math.abs(Math.sin((Math.PI * i) / 2000));
    voice.writeInt16LE(Math.round(12000 * env * Math.sin((2 * Math.PI * 200 * i) / 8000)), i * 2);
  }
  const samples = (pcm: Buffer) => Array.from({ length: pcm.length / 2 }, (_, i) => pcm.readInt16LE(i * 2));
  const peakOf = (pcm: Buffer) => Math.max(...samples(pcm).map(Math.abs));

  it('flattens that share of the voiced samples at the voice peak, louder and square-topped, the same every time', () => {
    const clip = clipFor([voice], 10)!;
    const out = hardClip(voice, clip);
    const peak = peakOf(voice);
    expect(peakOf(out)).toBe(peak);
    const voiced = samples(voice).filter((x) => Math.abs(x) >= 100).length;
    const flat = samples(out).filter((x) => Math.abs(x) === peak).length;
    expect(flat / voiced).toBeGreaterThan(0.09);
    expect(flat / voiced).toBeLessThan(0.12);
    // Overdriven: the speech level rises while the peak stays, so the crest factor falls.
    expect(speechRms(out)).toBeGreaterThan(speechRms(voice) * 1.05);
    expect(peak / speechRms(out)).toBeLessThan(peak / speechRms(voice));
    // A sample under the clip level is only amplified; one over it is flattened.
    const i = samples(voice).findIndex((x) => x > 0 && x * clip.gain < peak - 1);
    expect(out.readInt16LE(i * 2)).toBe(Math.round(voice.readInt16LE(i * 2) * clip.gain));
    expect(hardClip(voice, clip).equals(out)).toBe(true);
    // More clipping flattens more.
    const heavy = hardClip(voice, clipFor([voice], 40)!);
    expect(samples(heavy).filter((x) => Math.abs(x) === peak).length).toBeGreaterThan(flat * 3);
    expect(clipFor([voice], 0)).toBeNull();
  });

  it("clips a scenario's caller speech before the line, and its backchannels through the same handset", async () => {
    const [s] = parseScenarioFile(`
name: loud caller
impairments: {clipPct: 20}
turns: [{audio: {key: voice.wav, transcript: "hello"}}, {audio: {key: voice.wav, startMs: 0, endMs: 500}}]
`);
    const wav = encodeWav(voice, 8000);
    const clean = await callerSpeech({ ...s!, impairments: undefined }, async () => wav);
    expect(clean.turns[0]!.pcm.equals(voice)).toBe(true);
    const loud = await callerSpeech(s!, async () => wav);
    const peak = peakOf(voice);
    expect(peakOf(loud.turns[0]!.pcm)).toBe(peak);
    expect(loud.turns[0]!.pcm.equals(voice)).toBe(false);
    expect(loud.turns[1]!.pcm.equals(loud.turns[0]!.pcm.subarray(0, 500 * 16))).toBe(true);
    expect(loud.voice(voice).equals(loud.turns[0]!.pcm)).toBe(true);
    expect(loud.turns[0]!.script).toBe('hello');
  });
});

describe('GET /v1/agent-tests/schema', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ roles: ['api'] });
  }, 60_000);
  afterAll(async () => p?.close());

  it('serves the scenario file JSON Schema', async () => {
    const { apiKey } = await p.developer();
    const r = await p.request('/v1/agent-tests/schema', { key: apiKey });
    expect(r.status).toBe(200);
    const schema = (await r.json()) as { anyOf: Array<{ properties?: Record<string, unknown> }> };
    const one = schema.anyOf.find((s) => s.properties && 'turns' in s.properties)!;
    expect(Object.keys(one.properties!)).toEqual(
      expect.arrayContaining(['name', 'transport', 'llm', 'impairments', 'turns', 'expect']),
    );
  });
});

describe('the example suite', () => {
  it('is a valid scenario file', async () => {
    const text = await readFile('examples/agent-tests/front-desk.yaml', 'utf8');
    expect(parseScenarioFile(text).map((s) => s.name)).toHaveLength(3);
  });
});
