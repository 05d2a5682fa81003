import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { collect, int16ToPcm, pcmToInt16 } from '../../shared/kernel/audio/index.ts';
import { resamplePcm } from '../../shared/kernel/audio/resampler.ts';
import { PocketsphinxSttEngine, parsePocketsphinxOutput } from '../../shared/engines/stt/pocketsphinx.ts';
import { lastCepstralMean, withCmnInit } from '../../shared/engines/stt/pocketsphinx-cmn.ts';
import { PocketsphinxOutputParser } from '../../shared/engines/stt/pocketsphinx-output.ts';
import type { SttProgress, SttRequest } from '../../shared/engines/stt/types.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { engineToApiError } from '../../shared/kernel/errors/engine-error.ts';
import { splitForSynthesis } from '../../shared/engines/tts/text-chunks.ts';
import { SileroVad, speechRegions } from '../../shared/engines/vad/silero.ts';
import { frameFeatures } from '../../shared/kernel/audio/features.ts';
import { waitUntil } from '../../support/helpers/platform.ts';
import {
  CONVERSATION_LINES,
  ROUND_TRIP_SENTENCES,
  conversation,
  diarizationAccuracy,
  runningDecoders,
  speak,
  wordErrors,
} from './helpers/speech.ts';

const tts = new LocalTtsEngine();
const stt = new PocketsphinxSttEngine();
const MODEL = '/usr/share/pocketsphinx/model/en-us';

function medianPitch(pcm: Buffer): number {
  const f0 = [...frameFeatures(pcmToInt16(pcm), 16000).f0].filter((p) => p > 0).sort((a, b) => a - b);
  return f0[Math.floor(f0.length / 2)]!;
}

describe('default TTS (flite + espeak-ng)', () => {
  it('lists flite and espeak-ng voices with id, name, language, gender, provider', async () => {
    const voices = await tts.voices();
    expect(voices.find((v) => v.id === 'flite-slt')).toEqual({
      id: 'flite-slt',
      name: expect.any(String),
      language: 'en-US',
      gender: 'female',
      provider: 'default',
    });
    expect(voices.some((v) => v.id === 'espeak-de')).toBe(true);
    expect(voices.length).toBeGreaterThan(20);
  });

  it('streams the first sentence before the rest is rendered', async () => {
    const text =
      'This is the first sentence. ' + 'Here comes a much longer second sentence that takes a while. '.repeat(4);
    expect(splitForSynthesis(text).length).toBeGreaterThan(2);
    const a = await tts.synthesize({ text, voiceId: 'default', speed: 1, pitch: 1 });
    const chunks: Buffer[] = [];
    for await (const c of a.chunks) chunks.push(c);
    expect(a.sampleRate).toBe(16000);
    expect(chunks.length).toBeGreaterThan(2);
  });

  it('honours speed (duration) and pitch (F0) on a native-pitch voice, a resampled one and espeak-ng', async () => {
    for (const voiceId of ['flite-slt', 'flite-rms', 'espeak-en-us']) {
      const base = await speak(tts, 'the weather is nice today in the city', voiceId);
      const fast = await speak(tts, 'the weather is nice today in the city', voiceId).then(async () => {
        const a = await tts.synthesize({ text: 'the weather is nice today in the city', voiceId, speed: 2, pitch: 1 });
        return collect(a.chunks).then((b) => ({ b, rate: a.sampleRate }));
      });
      expect(fast.b.length / 2 / fast.rate).toBeLessThan((base.length / 32000) * 0.7);
      const high = await tts.synthesize({
        text: 'the weather is nice today in the city',
        voiceId,
        speed: 1,
        pitch: 1.5,
      });
      const highPcm = (await import('../../shared/kernel/audio/resampler.ts')).resamplePcm(
        await collect(high.chunks),
        high.sampleRate,
        16000,
      );
      const ratio = medianPitch(highPcm) / medianPitch(base);
      expect(ratio, voiceId).toBeGreaterThan(1.3);
      expect(ratio, voiceId).toBeLessThan(1.7);
      // Pitch alone keeps the duration within 15 %.
      expect(highPcm.length / base.length).toBeGreaterThan(0.85);
      expect(highPcm.length / base.length).toBeLessThan(1.15);
    }
  });

  it('refuses an unknown voice and unspeakable text as invalid input, which the API answers with 400s', async () => {
    const voice = await tts.synthesize({ text: 'hi', voiceId: 'nope', speed: 1, pitch: 1 }).catch((e: unknown) => e);
    expect(voice).toMatchObject({ name: 'EngineError', kind: 'invalid_input', param: 'voiceId', retryable: false });
    expect(engineToApiError(voice)).toMatchObject({ status: 400, code: 'validation_failed', param: 'voiceId' });
    const text = await tts.synthesize({ text: '   ...  ', voiceId: 'default', speed: 1, pitch: 1 }).catch((e) => e);
    expect(text).toMatchObject({ name: 'EngineError', kind: 'invalid_input', param: 'text' });
    expect(engineToApiError(text)).toMatchObject({ status: 400, param: 'text' });
  });
});

describe('default STT (pocketsphinx)', () => {
  it('parses decoder output into segments and words, dropping fillers and pronunciation variants', () => {
    const out = [
      'hello world',
      '<s> 0.000 0.100 0.99',
      'hello 0.110 0.400 0.9',
      '<sil> 0.400 0.500 1.0',
      'world(2) 0.500 0.900 0.8',
      '</s> 0.900 1.000 1.0',
      '',
      '<s> 2.000 2.100 0.99',
      '[NOISE] 2.100 2.300 0.5',
      '</s> 2.300 2.400 1.0',
    ].join('\n');
    const segs = parsePocketsphinxOutput(out);
    expect(segs).toHaveLength(1);
    expect(segs[0]).toMatchObject({ start: 0.11, end: 0.9, text: 'hello world' });
    expect(segs[0]!.words.map((w) => w.word)).toEqual(['hello', 'world']);
  });

  it('transcribes flite speech with word timings inside the audio, both modes', async () => {
    const pcm = await speak(tts, 'please call me back when you get home tonight');
    for (const mode of ['accurate', 'fast'] as const) {
      const r = await stt.transcribe({
        pcm,
        sampleRate: 16000,
        language: 'en',
        mode,
        timestamps: 'word',
        diarize: false,
      });
      expect(wordErrors('please call me back when you get home tonight', r.text)).toBeLessThanOrEqual(
        mode === 'fast' ? 4 : 2,
      );
      expect(r.language).toBe('en');
      expect(r.duration).toBeCloseTo(pcm.length / 32000, 2);
      expect(r.words!.length).toBeGreaterThan(5);
      for (const w of r.words!) {
        expect(w.start).toBeLessThan(w.end);
        expect(w.end).toBeLessThanOrEqual(r.duration + 0.01);
      }
      expect(r.segments[0]!.start).toBeLessThanOrEqual(r.words![0]!.start);
    }
  });

  it("measures a recording's cepstral mean with a keyword pass: the mean a full decode of it ends with", async () => {
    const pcm = await speak(tts, 'do you take blue cross insurance', 'flite-awb');
    const mean = await stt.cepstralMean(pcm);
    expect(mean?.split(',')).toHaveLength(13);
    // A full decode with the general model, its log read the way the engine reads a piece's.
    const dir = mkdtempSync(join(tmpdir(), 'cmn-'));
    try {
      writeFileSync(join(dir, 'a.raw'), pcm);
      const lm = ['-lm', join(MODEL, 'en-us.lm.bin'), '-dict', join(MODEL, 'cmudict-en-us.dict')];
      const io = ['-samprate', '16000', '-infile', join(dir, 'a.raw'), '-logfn', join(dir, 'a.log')];
      execFileSync('pocketsphinx_continuous', ['-hmm', join(MODEL, 'en-us'), ...lm, ...io]);
      expect(mean).toBe(lastCepstralMean(readFileSync(join(dir, 'a.log'), 'utf8')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // flite's voices are far from the model's starting mean (its -cmninit): that is what the pass is for.
    const start = /^-cmninit\s+(\S+)/m.exec(readFileSync(join(MODEL, 'en-us', 'feat.params'), 'utf8'))![1]!.split(',');
    const distance = Math.hypot(...mean!.split(',').map((v, i) => Number(v) - Number(start[i])));
    expect(distance).toBeGreaterThan(10);
    expect(await stt.cepstralMean(Buffer.alloc(32000))).toBeNull();
  });

  it("decodes short recordings better from their own cepstral mean than from the model's", async () => {
    // The ten round-trip sentences, each its own recording, by two flite voices (measured: 23 word errors against
    // 35; the other two gained less: awb 23 against 26, slt 19 against 20). Not every sentence gains (rms's first five
    // lost 4 words), so the whole set is the measure.
    const fast = { sampleRate: 16000, language: 'en', mode: 'fast', timestamps: 'segment', diarize: false } as const;
    const fromModel = new PocketsphinxSttEngine({ calibrateCmn: false });
    const errors = { own: 0, model: 0 };
    for (const voice of ['flite-rms', 'flite-kal16']) {
      for (const text of ROUND_TRIP_SENTENCES) {
        const pcm = await speak(tts, text, voice);
        const req = { ...fast, pcm };
        // The two decoders of a recording run side by side (each decode is a process of its own).
        const [own, model] = await Promise.all([stt.transcribe(req), fromModel.transcribe(req)]);
        errors.own += wordErrors(text, own.text);
        errors.model += wordErrors(text, model.text);
      }
    }
    expect(errors.own).toBeLessThan(errors.model * 0.85);
    // 40 decodes and 20 syntheses: 44 s alone at load 2 before the pairs ran side by side, past 60 s in a full run
    // at load 4 (stop 35's suite runs); sized for a loaded fork.
  }, 180_000);

  it('queues decoders beyond maxConcurrent and releases every slot', async () => {
    const one = new PocketsphinxSttEngine({ maxConcurrent: 1 });
    const pcm = await speak(tts, 'thank you very much');
    const req = { pcm, sampleRate: 16000, language: '', mode: 'fast', timestamps: 'segment', diarize: false } as const;
    const texts = await Promise.all([one.transcribe(req), one.transcribe(req), one.transcribe(req)]);
    expect(new Set(texts.map((t) => t.text)).size).toBe(1);
    const ac = new AbortController();
    const running = one.transcribe(req);
    const waiting = one.transcribe({ ...req, signal: ac.signal });
    ac.abort(new Error('caller gave up'));
    await expect(waiting).rejects.toThrow();
    await expect(running).resolves.toMatchObject({ language: 'en' });
    await expect(one.transcribe(req)).resolves.toMatchObject({ language: 'en' });
  });

  it('refuses a language the English model cannot serve, which the API answers with 400 unsupported_language', async () => {
    const pcm = Buffer.alloc(32000);
    const e = await stt
      .transcribe({ pcm, sampleRate: 16000, language: 'de', mode: 'fast', timestamps: 'segment', diarize: false })
      .catch((err: unknown) => err);
    expect(e).toMatchObject({ name: 'EngineError', kind: 'invalid_input', problem: 'unsupported_language' });
    expect(engineToApiError(e)).toMatchObject({ code: 'unsupported_language', status: 400, param: 'language' });
  });

  it('returns an empty transcript for silence', async () => {
    const r = await stt.transcribe({
      pcm: Buffer.alloc(32000),
      sampleRate: 16000,
      language: '',
      mode: 'fast',
      timestamps: 'segment',
      diarize: false,
    });
    expect(r.text).toBe('');
    expect(r.segments).toEqual([]);
  });

  it('diarizes a two-voice conversation (female slt / male rms) by segment', async () => {
    const turns = CONVERSATION_LINES.map((text, i) => ({ text, voice: i % 2 ? 'flite-slt' : 'flite-rms' }));
    const { pcm, truth } = await conversation(tts, turns);
    const r = await stt.transcribe({
      pcm,
      sampleRate: 16000,
      language: 'en',
      mode: 'accurate',
      timestamps: 'segment',
      diarize: true,
    });
    const accuracy = diarizationAccuracy(r.segments, truth);
    expect(accuracy).toBeGreaterThanOrEqual(0.9);
  });
});

describe('default STT, incremental (transcribeIncremental)', () => {
  let req: SttRequest;
  beforeAll(async () => {
    // The ten round-trip sentences with 1 s pauses: about 36 s, so more than one piece of at most 30 s.
    const turns = ROUND_TRIP_SENTENCES.map((text) => ({ text, voice: 'default' }));
    const { pcm } = await conversation(tts, turns, 1);
    req = { pcm, sampleRate: 16000, language: 'en', mode: 'accurate', timestamps: 'word', diarize: false };
  });

  it('closes an utterance at its </s>, so a reader of live output gets it without waiting for the next one', () => {
    const parser = new PocketsphinxOutputParser(30);
    expect(parser.line('hello world')).toBeNull();
    expect(parser.line('<s> 0.000 0.100 0.99')).toBeNull();
    expect(parser.line('hello 0.110 0.400 0.9')).toBeNull();
    expect(parser.line('world 0.500 0.900 0.8')).toBeNull();
    expect(parser.line('</s> 0.900 1.000 1.0')).toMatchObject({ start: 30.11, end: 30.9, text: 'hello world' });
    expect(parser.end()).toBeNull();
  });

  it('carries the cepstral mean a decoder log ends with into the next piece through feat.params', () => {
    const log = [
      'INFO: cmn_live.c(120): Update from < 41.00 -5.29 >',
      'INFO: cmn_live.c(138): Update to   < 44.78 11.32 >',
      'INFO: cmn_live.c(105): Update to   < 46.88  9.29 >',
      'INFO: ngram_search.c(1283): lattice start node <s>.0 end node </s>.228',
    ].join('\n');
    expect(lastCepstralMean(log)).toBe('46.88,9.29');
    expect(lastCepstralMean('INFO: nothing here')).toBeNull();
    expect(withCmnInit('-agc none\n-cmninit 41.00,-5.29\n-varnorm no\n', '46.88,9.29')).toBe(
      '-agc none\n-varnorm no\n-cmninit 46.88,9.29\n',
    );
  });

  it('reports each segment before the result, spells the result, and keeps recording times across pieces', async () => {
    const events: SttProgress[] = [];
    for await (const ev of stt.transcribeIncremental(req)) events.push(ev);
    const last = events.at(-1)!;
    if (last.type !== 'result') throw new Error('the last event is the result');
    const segments = events.slice(0, -1).map((e) => (e.type === 'segment' ? e.segment : null));
    expect(segments.every((s) => s !== null)).toBe(true);
    expect(segments.length).toBeGreaterThan(5);
    expect(segments.map((s) => s!.text).join(' ')).toBe(last.result.text);
    expect(last.result.segments.map((s) => s.text)).toEqual(segments.map((s) => s!.text));
    // Times are from the start of the recording: increasing, inside it, and some past the first 30 s piece.
    const starts = segments.map((s) => s!.start);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect(segments.at(-1)!.end).toBeLessThanOrEqual(last.result.duration);
    expect(starts.some((t) => t > 30)).toBe(true);
    expect(last.result.words!.at(-1)!.end).toBeGreaterThan(30);
    // Segment boundaries may change a word where a piece starts; nothing more.
    const whole = await stt.transcribe(req);
    expect(wordErrors(whole.text, last.result.text)).toBeLessThanOrEqual(2);
    expect(wordErrors(ROUND_TRIP_SENTENCES.join(' '), last.result.text)).toBeLessThanOrEqual(10);
    // Two decodes of the whole recording: a whole run beside two helpers' tests (load 8) took past 120 s.
  }, 240_000);

  it('stops its decoder when the consumer aborts or stops early, and frees the slot', async () => {
    const one = new PocketsphinxSttEngine({ maxConcurrent: 1 });
    const ac = new AbortController();
    const run = (async () => {
      for await (const ev of one.transcribeIncremental({ ...req, signal: ac.signal })) {
        if (ev.type === 'segment') ac.abort(new Error('client disconnected'));
      }
    })();
    await expect(run).rejects.toThrow('client disconnected');
    await waitUntil(() => runningDecoders().length === 0);
    for await (const ev of one.transcribeIncremental(req)) if (ev.type === 'segment') break;
    await waitUntil(() => runningDecoders().length === 0);
    // The single slot is free again: a whole-file decode runs instead of waiting forever.
    const short = { ...req, pcm: req.pcm.subarray(0, 16000 * 2 * 3) };
    await expect(one.transcribe(short)).resolves.toMatchObject({ language: 'en' });
  }, 120_000);
});

describe('Silero VAD', () => {
  it('finds speech in speech and none in silence', async () => {
    const vad = new SileroVad();
    const session = vad.session();
    const silence = await session.push(new Int16Array(512));
    expect(silence).toBeLessThan(0.2);
    const pcm = await speak(tts, 'hello there, this is a test of voice activity detection');
    const padded = Buffer.concat([Buffer.alloc(32000), pcm, Buffer.alloc(32000)]);
    const regions = await speechRegions(vad, pcmToInt16(padded));
    expect(regions.length).toBeGreaterThanOrEqual(1);
    expect(regions[0]!.start).toBeGreaterThan(0.8);
    expect(regions[0]!.start).toBeLessThan(1.4);
    expect(regions[regions.length - 1]!.end).toBeLessThan(padded.length / 32000 - 0.5);
  });

  it('reads 8 kHz phone audio natively, finding the speech it finds in the same audio at 16 kHz', async () => {
    const vad16 = new SileroVad();
    const vad8 = vad16.atRate(8000)!;
    expect([vad8.sampleRate, vad8.frameSamples, vad16.atRate(16000), vad16.atRate(44100)]).toEqual([
      8000,
      256,
      vad16,
      null,
    ]);
    const pcm = await speak(tts, 'hello there, this is a test of voice activity detection');
    const padded = pcmToInt16(Buffer.concat([Buffer.alloc(32000), pcm, Buffer.alloc(32000)]));
    const at8 = pcmToInt16(resamplePcm(int16ToPcm(padded), 16000, 8000));
    const [r16, r8] = await Promise.all([speechRegions(vad16, padded), speechRegions(vad8, at8)]);
    expect(r8.length).toBe(r16.length);
    // Same regions within two frames (64 ms).
    r8.forEach((r, i) => {
      expect(Math.abs(r.start - r16[i]!.start)).toBeLessThan(0.07);
      expect(Math.abs(r.end - r16[i]!.end)).toBeLessThan(0.07);
    });
    await expect(vad8.session().push(new Int16Array(512))).rejects.toThrow(/256 samples at 8000/);
  });

  it('rejects frames of the wrong size', async () => {
    await expect(new SileroVad().session().push(new Int16Array(100))).rejects.toThrow(/512/);
  });
});
