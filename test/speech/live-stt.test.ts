import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSpeechEngines } from '../../shared/engines/speech-registry.ts';
import { DEFAULT_PS_STREAM_BIN, LocalLiveSttEngine } from '../../shared/engines/stt/pocketsphinx-live.ts';
import { PocketsphinxSttEngine } from '../../shared/engines/stt/pocketsphinx.ts';
import type { SttStream, SttStreamEvent } from '../../shared/engines/stt/types.ts';
import { isEngineError } from '../../shared/kernel/errors/engine-error.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { waitUntil } from '../../support/helpers/platform.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';

/**
 * The local live STT (streaming pocketsphinx on ps-stream workers) on real flite speech at the phone's 8 kHz: what
 * a call's STT stage sees. Needs the worker built by scripts/setup.d/41-ps-stream.sh (scripts/setup.sh runs it).
 */
const engine = new LocalLiveSttEngine(new PocketsphinxSttEngine(), { bin: DEFAULT_PS_STREAM_BIN, workers: 1 });
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'live-stt-'));
});
afterAll(async () => {
  engine.close();
  await rm(dir, { recursive: true, force: true });
});

const silence = (ms: number) => Buffer.alloc(Math.round(ms * 8) * 2);
/** flite's kal16 voice at the phone's 8 kHz (its 8 kHz `kal` voice is one pocketsphinx mostly mishears). */
const say = (text: string) => fliteUtterance(text, 8000, 'kal16');

/** Writes `pcm` (8 kHz) in 20 ms frames as a phone line delivers them (without the wall-clock wait). */
function feed(stream: SttStream, pcm: Buffer): void {
  for (let at = 0; at < pcm.length; at += 320) stream.write(pcm.subarray(at, at + 320));
}

async function collect(stream: SttStream): Promise<SttStreamEvent[]> {
  const events: SttStreamEvent[] = [];
  for await (const ev of stream.events) events.push(ev);
  return events;
}

describe('local live STT (pocketsphinx, streaming)', () => {
  it('hears a phone caller: partials while speaking, then a timed final per utterance', async () => {
    const first = await say('What are your opening hours?');
    const second = await say('When are you open?');
    const stream = engine.stream({ sampleRate: 8000, language: 'en' });
    const events = collect(stream);
    feed(stream, Buffer.concat([silence(500), first, silence(800), second, silence(800)]));
    stream.end();
    const got = await events;
    const finals = got.filter((e) => e.type === 'final');
    expect(finals).toHaveLength(2);
    expect(finals[0]!.text).toMatch(/opening/);
    expect(finals[1]!.text).toMatch(/open/);
    // Partials come before each final, growing as the words arrive.
    const firstFinal = got.indexOf(finals[0]!);
    expect(got.slice(0, firstFinal).some((e) => e.type === 'partial' && e.text.length > 0)).toBe(true);
    // Times are seconds of the stream's audio: the first utterance starts near 0.5 s, the second after it.
    const firstEnd = 0.5 + first.length / 16000;
    expect(finals[0]!.start).toBeGreaterThan(0.1);
    expect(finals[0]!.start).toBeLessThan(0.6);
    expect(Math.abs(finals[0]!.end - firstEnd)).toBeLessThan(0.25);
    expect(finals[1]!.start).toBeGreaterThan(finals[0]!.end);
    expect(engine.labelFor()).toBe('pocketsphinx (local, streaming)');
  }, 60_000);

  it('reports its progress through the audio: settled only once the utterance is finalized', async () => {
    const words = await say('What are your opening hours?');
    const stream = engine.stream({ sampleRate: 8000, language: 'en' });
    const events = collect(stream);
    // 8 kHz in: 16 bytes a ms.
    const totalMs = 500 + words.length / 16 + 800;
    feed(stream, Buffer.concat([silence(500), words, silence(800)]));
    stream.end();
    const got = await events;
    const progress = got.flatMap((e) => (e.type === 'progress' ? [e] : []));
    const final = got.find((e) => e.type === 'final');
    expect(final).toBeDefined();
    // About one report per 100 ms of audio, decoded time rising to the end of what was sent.
    expect(progress.length).toBeGreaterThan(totalMs / 100 / 2);
    expect(progress.length).toBeLessThanOrEqual(totalMs / 100 + 1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.decoded).toBeGreaterThan(progress[i - 1]!.decoded);
    expect(progress.at(-1)!.decoded).toBeGreaterThan(totalMs / 1000 - 0.15);
    for (const p of progress) expect(p.settled).toBeLessThanOrEqual(p.decoded);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]!.settled).toBeGreaterThanOrEqual(progress[i - 1]!.settled);
    // While the utterance is open its final is not out: settled stays before its speech's end until the final,
    // and the first report after the final is settled past it.
    const at = got.indexOf(final!);
    for (const e of got.slice(0, at)) if (e.type === 'progress') expect(e.settled).toBeLessThan(final!.end);
    const next = got.slice(at).find((e) => e.type === 'progress');
    expect(next?.type === 'progress' && next.settled).toBeGreaterThan(final!.end);
  }, 60_000);

  it('end() flushes an utterance the caller has not finished', async () => {
    const stream = engine.stream({ sampleRate: 8000, language: 'en' });
    const events = collect(stream);
    feed(stream, Buffer.concat([silence(300), await say('When are you open?')]));
    stream.end();
    const finals = (await events).filter((e) => e.type === 'final');
    expect(finals.map((f) => f.text)).toEqual([expect.stringMatching(/open/)]);
  }, 60_000);

  it('decodes with the request language model and dictionary (-lm, -dict) and says so in its label', async () => {
    // A three-word model: whatever it hears is one of its words.
    const lm = join(dir, 'tiny.lm');
    const dict = join(dir, 'tiny.dict');
    await writeFile(
      lm,
      [
        '\\data\\',
        'ngram 1=5',
        '',
        '\\1-grams:',
        '-0.6021 </s> 0',
        '-99 <s> 0',
        '-0.6021 clinic 0',
        '-0.6021 yes 0',
        '-0.6021 no 0',
        '',
        '\\end\\',
        '',
      ].join('\n'),
    );
    await writeFile(dict, 'clinic K L IH N IH K\nyes Y EH S\nno N OW\n');
    const languageModel = { lm, dict, label: 'biased to agent agt_test' };
    const stream = engine.stream({ sampleRate: 8000, language: 'en', languageModel });
    const events = collect(stream);
    feed(stream, Buffer.concat([silence(300), await say('clinic'), silence(600)]));
    stream.end();
    const finals = (await events).filter((e) => e.type === 'final');
    expect(finals.length).toBeGreaterThan(0);
    expect(finals.flatMap((f) => f.text.split(' '))).toEqual(expect.arrayContaining(['clinic']));
    for (const f of finals) expect(f.text.split(' ').every((w) => ['clinic', 'yes', 'no'].includes(w))).toBe(true);
    expect(engine.labelFor(languageModel)).toBe('pocketsphinx (local, streaming, biased to agent agt_test)');
  }, 60_000);

  it('a language model that will not load fails the stream for good (not retried)', async () => {
    const stream = engine.stream({
      sampleRate: 8000,
      language: 'en',
      languageModel: { lm: join(dir, 'missing.lm'), dict: join(dir, 'missing.dict'), label: 'biased' },
    });
    const events = collect(stream);
    feed(stream, Buffer.concat([silence(300), await say('When are you open?')]));
    const err = await events.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isEngineError(err) && err.retryable).toBe(false);
  }, 60_000);

  it('a crashed worker fails its calls retryably; the next stream runs on a new worker', async () => {
    const stream = engine.stream({ sampleRate: 8000, language: 'en' });
    const events = collect(stream);
    feed(stream, silence(200));
    await waitUntil(() => engine.pool.pids.length > 0);
    const before = engine.pool.started;
    process.kill(engine.pool.pids[0]!, 'SIGKILL');
    const err = await events.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isEngineError(err) && err.retryable).toBe(true);
    const again = engine.stream({ sampleRate: 8000, language: 'en' });
    const next = collect(again);
    feed(again, Buffer.concat([silence(300), await say('When are you open?'), silence(600)]));
    again.end();
    expect((await next).filter((e) => e.type === 'final').map((f) => f.text)).toEqual([expect.stringMatching(/open/)]);
    expect(engine.pool.started).toBe(before + 1);
  }, 60_000);

  it('refuses a language other than English', () => {
    expect(() => engine.stream({ sampleRate: 8000, language: 'fr' })).toThrow(/English only/);
  });
});

describe('when the worker binary is missing (set-up not run)', () => {
  it('calls fall back to batch pocketsphinx per utterance, and the registry says why', () => {
    const missing = join(tmpdir(), 'no-such-ps-stream');
    const speech = buildSpeechEngines(loadConfig({ ...process.env, SPEECH_PS_STREAM_BIN: missing }));
    expect(speech.liveStt).toBeInstanceOf(PocketsphinxSttEngine);
    expect(speech.liveStt.capabilities.streaming).toBe(false);
    expect(speech.liveSttFallback).toContain(missing);
    const built = buildSpeechEngines(loadConfig({ ...process.env, SPEECH_PS_STREAM_BIN: DEFAULT_PS_STREAM_BIN }));
    expect(built.liveStt).toBeInstanceOf(LocalLiveSttEngine);
    expect(built.liveSttFallback).toBeNull();
    (built.liveStt as LocalLiveSttEngine).close();
  });
});
