import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SttEngine, SttProgress, SttRequest } from '../../../shared/engines/stt/types.ts';
import { tone } from '../../../support/doubles/audio.ts';
import type { HttpDouble, RecordedRequest } from '../../../shared/domains/agent-tests/simulators/http-double.ts';
import { SCRIPT } from '../../../shared/domains/agent-tests/simulators/transcript.ts';
import { engineError } from './conformance.ts';

/**
 * The conformance suite every brand-named STT adapter runs against its vendor double: naming, a transcription
 * mapped to the contract's result (text, segments, words, language, duration), diarization where offered,
 * phone-rate audio, the key in the vendor's scheme, error mapping, abort, and a missing key.
 */
export interface SttVendorCase {
  provider: string;
  startDouble(): Promise<HttpDouble>;
  make(baseUrl: string): SttEngine;
  credential(req: RecordedRequest): string | undefined;
  /** Vendor-specific checks of the recorded requests of one transcription. */
  checkRequests?(reqs: RecordedRequest[], double: HttpDouble): void | Promise<void>;
}

export function sttRequest(over: Partial<SttRequest> = {}): SttRequest {
  return {
    pcm: tone(16000, 2),
    sampleRate: 16000,
    language: 'en',
    mode: 'accurate',
    timestamps: 'segment',
    diarize: false,
    ...over,
  };
}

export function sttConformance(c: SttVendorCase): void {
  describe(`${c.provider} STT adapter (conformance)`, () => {
    let double: HttpDouble;
    let engine: SttEngine;
    beforeAll(async () => {
      double = await c.startDouble();
      engine = c.make(double.url);
    });
    afterAll(() => double.close());

    it('names itself honestly', () => {
      expect(engine.provider).toBe(c.provider);
      expect(engine.label).toBe(`${c.provider}.stt`);
      expect(engine.capabilities.requiresKey).toBe(true);
    });

    it('transcribes into the contract result, with the key in the vendor auth scheme', async () => {
      const before = double.requests.length;
      const out = await engine.transcribe(sttRequest({ apiKey: double.key }));
      expect(out.text).toBe(SCRIPT);
      expect(out.language).toBe('en');
      expect(out.duration).toBeCloseTo(2, 1);
      expect(out.segments.length).toBeGreaterThan(0);
      for (const s of out.segments) {
        expect(s.end).toBeGreaterThan(s.start);
        expect(s.text.length).toBeGreaterThan(0);
        expect(s.speaker).toBeUndefined();
      }
      expect(out.words).toBeUndefined();
      const reqs = double.requests.slice(before);
      expect(reqs.length).toBeGreaterThan(0);
      for (const r of reqs.filter((r) => !r.path.startsWith('/files/'))) expect(c.credential(r)).toBe(double.key);
      await c.checkRequests?.(reqs, double);
    });

    it('reports a transcription incrementally: segments that spell the text, then the same result', async () => {
      const events: SttProgress[] = [];
      for await (const ev of engine.transcribeIncremental(sttRequest({ apiKey: double.key }))) events.push(ev);
      const last = events.pop();
      expect(last).toMatchObject({ type: 'result', result: { text: SCRIPT, language: 'en' } });
      expect(events.length).toBeGreaterThan(0);
      expect(events.map((e) => (e.type === 'segment' ? e.segment.text : '?')).join(' ')).toBe(SCRIPT);
    });

    it('returns word timestamps when asked', async () => {
      const out = await engine.transcribe(sttRequest({ apiKey: double.key, timestamps: 'word' }));
      expect(out.words?.map((w) => w.word).join(' ')).toBe(SCRIPT);
      const starts = out.words!.map((w) => w.start);
      expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    });

    it('labels speakers when diarizing (where the vendor offers it)', async (ctx) => {
      if (!engine.capabilities.diarization) return ctx.skip();
      const out = await engine.transcribe(sttRequest({ apiKey: double.key, diarize: true }));
      expect(new Set(out.segments.map((s) => s.speaker))).toEqual(new Set(['speaker_0', 'speaker_1']));
    });

    it('takes 8 kHz phone audio at its own rate', async () => {
      const out = await engine.transcribe(sttRequest({ apiKey: double.key, pcm: tone(8000, 3), sampleRate: 8000 }));
      expect(out.duration).toBeCloseTo(3, 1);
    });

    it('maps 401 to permanent auth, 429/503 to retryable, unreachable to retryable', async () => {
      expect(await engineError(engine.transcribe(sttRequest({ apiKey: 'wrong' })))).toMatchObject({
        provider: c.provider,
        kind: 'auth',
        retryable: false,
        status: 401,
      });
      let clear = double.failUntilCleared(429);
      expect(await engineError(engine.transcribe(sttRequest({ apiKey: double.key })))).toMatchObject({
        kind: 'rate_limited',
        retryable: true,
      });
      clear();
      clear = double.failUntilCleared(503);
      expect(await engineError(engine.transcribe(sttRequest({ apiKey: double.key })))).toMatchObject({
        kind: 'upstream',
        retryable: true,
      });
      clear();
      // A single 429 is absorbed: the client sends the request again and the transcription succeeds.
      double.failNext(429);
      await expect(engine.transcribe(sttRequest({ apiKey: double.key }))).resolves.toBeTruthy();
      const down = c.make('http://127.0.0.1:9');
      expect(await engineError(down.transcribe(sttRequest({ apiKey: double.key })))).toMatchObject({
        kind: 'unavailable',
        retryable: true,
      });
    });

    it('honours an aborted signal and fails without a key before calling the vendor', async () => {
      const ac = new AbortController();
      ac.abort();
      expect(await engineError(engine.transcribe(sttRequest({ apiKey: double.key, signal: ac.signal })))).toMatchObject(
        {
          kind: 'aborted',
        },
      );
      const before = double.requests.length;
      expect(await engineError(engine.transcribe(sttRequest()))).toMatchObject({ kind: 'auth', retryable: false });
      expect(double.requests.length).toBe(before);
    });
  });
}
