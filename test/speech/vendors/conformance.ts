import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEngineError, type EngineError } from '../../../shared/kernel/errors/engine-error.ts';
import type { TtsEngine, TtsRequest } from '../../../shared/engines/tts/types.ts';
import type { HttpDouble, RecordedRequest } from '../../../shared/domains/agent-tests/simulators/http-double.ts';

/**
 * The conformance suite every brand-named TTS adapter runs against its vendor double: naming and voices,
 * synthesis to aligned PCM with the key in the vendor's auth scheme, streaming (audio before the vendor has
 * finished), error mapping (401 → permanent auth; 429/503/network → retryable; 400 → permanent; a 2xx that is
 * not audio → upstream), abort, and a missing key failing before any call.
 */
export interface TtsVendorCase {
  provider: string;
  startDouble(): Promise<HttpDouble>;
  /** The adapter pointed at a base URL. */
  make(baseUrl: string): TtsEngine;
  /** The credential as the vendor received it (compared with the double's key); omit for signed schemes. */
  credential?(req: RecordedRequest): string | undefined;
  /** Vendor-specific checks of the recorded synthesis request. */
  checkRequest?(req: RecordedRequest, double: HttpDouble): void;
}

export function ttsRequest(over: Partial<TtsRequest> = {}): TtsRequest {
  return { text: 'Hello from the conformance suite.', voiceId: 'default', speed: 1, pitch: 1, ...over };
}

export async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const c of chunks) out.push(c);
  return out;
}

export async function engineError(p: Promise<unknown>): Promise<EngineError> {
  try {
    const v = await p;
    // A stream that fails while it is read also counts.
    if (v && typeof v === 'object' && 'chunks' in v) await collect((v as { chunks: AsyncIterable<Buffer> }).chunks);
  } catch (e) {
    if (isEngineError(e)) return e;
    throw new Error(`expected an EngineError, got ${String(e)}`, { cause: e });
  }
  throw new Error('expected the call to fail');
}

function rms(pcm: Buffer): number {
  let sum = 0;
  for (let i = 0; i + 1 < pcm.length; i += 2) sum += pcm.readInt16LE(i) ** 2;
  return Math.sqrt(sum / Math.max(1, pcm.length / 2));
}

export function ttsConformance(c: TtsVendorCase): void {
  describe(`${c.provider} TTS adapter (conformance)`, () => {
    let double: HttpDouble;
    let engine: TtsEngine;
    beforeAll(async () => {
      double = await c.startDouble();
      engine = c.make(double.url);
    });
    afterAll(() => double.close());

    it('names itself honestly and lists stock voices', async () => {
      expect(engine.provider).toBe(c.provider);
      expect(engine.label).toBe(`${c.provider}.tts`);
      expect(engine.capabilities.requiresKey).toBe(true);
      const voices = await engine.voices();
      expect(voices.length).toBeGreaterThan(0);
      expect(new Set(voices.map((v) => v.id)).size).toBe(voices.length);
      for (const v of voices) expect(v).toMatchObject({ provider: c.provider, id: expect.any(String) });
    });

    it('synthesizes aligned PCM, sending the key in the vendor auth scheme', async () => {
      const before = double.requests.length;
      const audio = await engine.synthesize(ttsRequest({ apiKey: double.key }));
      const chunks = await collect(audio.chunks);
      expect(audio.sampleRate).toBeGreaterThanOrEqual(8000);
      const pcm = Buffer.concat(chunks);
      expect(pcm.length).toBeGreaterThan(1000);
      for (const ch of chunks) expect(ch.length % 2).toBe(0);
      expect(rms(pcm)).toBeGreaterThan(1000); // the double's tone, not silence or garbage
      expect(double.requests.length).toBeGreaterThan(before);
      const req = double.requests[before]!;
      if (c.credential) expect(c.credential(req)).toBe(double.key);
      c.checkRequest?.(req, double);
    });

    it('streams: the first chunk arrives while the vendor is still sending', async (ctx) => {
      if (!engine.capabilities.streaming) return ctx.skip();
      const release = double.holdAfterFirstChunk();
      try {
        const audio = await engine.synthesize(ttsRequest({ apiKey: double.key }));
        const it = audio.chunks[Symbol.asyncIterator]();
        const first = await it.next(); // would hang here if the adapter buffered the whole body
        expect(first.done).toBe(false);
        expect(first.value.length).toBeGreaterThan(0);
        release();
        let rest = 0;
        for (let r = await it.next(); !r.done; r = await it.next()) rest += r.value.length;
        expect(rest).toBeGreaterThan(0);
      } finally {
        release();
      }
    });

    it('cancels the vendor stream when the consumer stops early or the signal aborts mid-stream', async (ctx) => {
      if (!engine.capabilities.streaming) return ctx.skip();
      const release = double.holdAfterFirstChunk();
      try {
        const before = double.cancelledStreams;
        const audio = await engine.synthesize(ttsRequest({ apiKey: double.key }));
        const it = audio.chunks[Symbol.asyncIterator]();
        expect((await it.next()).done).toBe(false);
        await it.return?.(); // a barge-in: the consumer walks away
        await expect.poll(() => double.cancelledStreams).toBe(before + 1);

        const ac = new AbortController();
        const aborted = await engine.synthesize(ttsRequest({ apiKey: double.key, signal: ac.signal }));
        const it2 = aborted.chunks[Symbol.asyncIterator]();
        expect((await it2.next()).done).toBe(false);
        ac.abort();
        expect(await engineError(it2.next())).toMatchObject({ kind: 'aborted', retryable: false });
        await expect.poll(() => double.cancelledStreams).toBe(before + 2);
      } finally {
        release();
      }
    });

    it('maps a rejected key (401) to a permanent auth error', async () => {
      const e = await engineError(engine.synthesize(ttsRequest({ apiKey: `${double.key}-wrong` })));
      expect(e).toMatchObject({ provider: c.provider, kind: 'auth', retryable: false });
      expect([401, 403]).toContain(e.status);
    });

    it('maps a lasting 429 and 503 to retryable errors and 400 to a permanent one', async () => {
      let clear = double.failUntilCleared(429, 'slow down');
      expect(await engineError(engine.synthesize(ttsRequest({ apiKey: double.key })))).toMatchObject({
        kind: 'rate_limited',
        retryable: true,
        status: 429,
      });
      clear();
      clear = double.failUntilCleared(503, 'overloaded');
      expect(await engineError(engine.synthesize(ttsRequest({ apiKey: double.key })))).toMatchObject({
        kind: 'upstream',
        retryable: true,
        status: 503,
      });
      clear();
      double.failNext(400, 'bad input');
      const bad = await engineError(engine.synthesize(ttsRequest({ apiKey: double.key })));
      expect(bad).toMatchObject({ kind: 'bad_request', retryable: false, status: 400 });
      expect(bad.message).toContain('bad input'); // the vendor's error body travels in the message
    });

    it('absorbs a single 429 by sending the request again (the vendor did not take it)', async () => {
      double.failNext(429, 'slow down');
      const before = double.requests.length;
      const audio = await engine.synthesize(ttsRequest({ apiKey: double.key }));
      expect((await collect(audio.chunks)).length).toBeGreaterThan(0);
      expect(double.requests.length - before).toBeGreaterThanOrEqual(2);
    });

    it('treats a 2xx that is not the vendor answer (an HTML page) as a retryable upstream error', async () => {
      double.answerNext(200, '<html><body>gateway says hi</body></html>', 'text/html');
      const e = await engineError(engine.synthesize(ttsRequest({ apiKey: double.key })));
      expect(e).toMatchObject({ kind: 'upstream', retryable: true });
    });

    it('maps an unreachable vendor to a retryable error', async () => {
      const down = c.make('http://127.0.0.1:9');
      const e = await engineError(down.synthesize(ttsRequest({ apiKey: double.key })));
      expect(e).toMatchObject({ kind: 'unavailable', retryable: true });
    });

    it('honours an aborted signal', async () => {
      const ac = new AbortController();
      ac.abort();
      const e = await engineError(engine.synthesize(ttsRequest({ apiKey: double.key, signal: ac.signal })));
      expect(e).toMatchObject({ kind: 'aborted', retryable: false });
    });

    it('fails with a permanent auth error before calling the vendor when no key was resolved', async () => {
      const before = double.requests.length;
      const e = await engineError(engine.synthesize(ttsRequest()));
      expect(e).toMatchObject({ kind: 'auth', retryable: false });
      expect(double.requests.length).toBe(before);
    });
  });
}
