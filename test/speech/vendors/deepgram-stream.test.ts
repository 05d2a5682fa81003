import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SttStreamEvent } from '../../../shared/engines/stt/types.ts';
import { DeepgramStt } from '../../../shared/engines/stt/vendors/deepgram.ts';
import type { DeepgramStreamOptions } from '../../../shared/engines/stt/vendors/deepgram-stream.ts';
import { silence, tone } from '../../../support/doubles/audio.ts';
import {
  DEEPGRAM_TYPICAL,
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import { engineError } from './conformance.ts';
import { drain, frames, mulaw } from './stream-helpers.ts';

describe('deepgram live STT over WebSocket', () => {
  let dg: DeepgramLiveDouble;
  let stt: DeepgramStt;
  beforeAll(async () => {
    dg = await startDeepgramLiveDouble({ model: 'endpointing', script: ['Hello there.', 'I need a table for two.'] });
    stt = new DeepgramStt({ baseUrl: dg.url, endpointingMs: 300 });
  });
  afterAll(() => dg.close());

  it('streams 8 kHz linear16: partials while speaking, a final per utterance, CloseStream flush', async () => {
    const s = stt.stream({ sampleRate: 8000, language: 'en', apiKey: dg.key });
    const events = drain(s.events);
    const audio = Buffer.concat([tone(8000, 0.6), silence(8000, 0.5), tone(8000, 0.4)]);
    for (const f of frames(audio, 320)) s.write(f);
    s.end();
    const got = await events;
    const finals = got.filter((e) => e.type === 'final');
    expect(finals.map((f) => f.text)).toEqual(['Hello there.', 'I need a table for two.']);
    expect(got.findIndex((e) => e.type === 'partial')).toBeLessThan(got.findIndex((e) => e.type === 'final'));
    // Partials say where their last word ends (the session's endpointing takes new words as speech).
    const partial = got.find((e) => e.type === 'partial') as Extract<SttStreamEvent, { type: 'partial' }>;
    expect(partial.end).toBeGreaterThan(0);
    expect(partial.end).toBeLessThanOrEqual(1.5);
    const [first, second] = finals as Extract<SttStreamEvent, { type: 'final' }>[];
    expect(first!.start).toBeCloseTo(0, 1);
    expect(first!.end).toBeCloseTo(0.6, 1);
    expect(second!.start).toBeGreaterThan(first!.end);
    expect(first!.words?.map((w) => w.word)).toEqual(['Hello', 'there.']);

    const conn = dg.connections.at(-1)!;
    expect(conn.headers.authorization).toBe(`Token ${dg.key}`);
    expect(Object.fromEntries(conn.query)).toMatchObject({
      model: 'nova-3',
      encoding: 'linear16',
      sample_rate: '8000',
      channels: '1',
      interim_results: 'true',
      endpointing: '300',
      language: 'en',
    });
    expect(conn.audioBytes).toBe(audio.length);
    expect(conn.controls).toEqual(['CloseStream']);
    await expect.poll(() => conn.closeCode).toBe(1000);
  });

  it('passes phone μ-law through untouched when asked (encoding=mulaw)', async () => {
    const opts: DeepgramStreamOptions = { sampleRate: 8000, language: 'en', apiKey: dg.key, encoding: 'mulaw' };
    const s = stt.stream(opts);
    const events = drain(s.events);
    const audio = mulaw(Buffer.concat([tone(8000, 0.5), silence(8000, 0.4)]));
    for (const f of frames(audio, 160)) s.write(f);
    s.end();
    expect((await events).filter((e) => e.type === 'final')).toHaveLength(1);
    expect(dg.connections.at(-1)!.query.get('encoding')).toBe('mulaw');
  });

  it('sends KeepAlive while no audio flows', async () => {
    const quick = new DeepgramStt({ baseUrl: dg.url, keepAliveMs: 500 });
    const s = quick.stream({ sampleRate: 16000, language: 'en', apiKey: dg.key });
    const events = drain(s.events);
    await expect.poll(() => dg.connections.at(-1)?.controls.includes('KeepAlive'), { timeout: 3000 }).toBe(true);
    s.end();
    await events;
  });

  it('maps a refused handshake: 401 permanent auth, 429 retryable', async () => {
    const bad = stt.stream({ sampleRate: 8000, language: 'en', apiKey: 'wrong' });
    expect(await engineError(drain(bad.events))).toMatchObject({ kind: 'auth', retryable: false, status: 401 });
    dg.failNextHandshake(429);
    const limited = stt.stream({ sampleRate: 8000, language: 'en', apiKey: dg.key });
    expect(await engineError(drain(limited.events))).toMatchObject({ kind: 'rate_limited', retryable: true });
  });

  it('follows the declared latency profile (first partial and final arrive no sooner than declared)', async () => {
    const slow = await startDeepgramLiveDouble({ model: 'endpointing', latency: DEEPGRAM_TYPICAL });
    try {
      const e = new DeepgramStt({ baseUrl: slow.url });
      const s = e.stream({ sampleRate: 8000, language: 'en', apiKey: slow.key });
      const t0 = Date.now();
      const stamps: [string, number][] = [];
      const done = (async () => {
        for await (const ev of s.events) stamps.push([ev.type, Date.now() - t0]);
      })();
      for (const f of frames(tone(8000, 0.2), 320)) s.write(f);
      for (const f of frames(silence(8000, 0.4), 320)) s.write(f);
      await expect.poll(() => stamps.some(([t]) => t === 'final'), { timeout: 3000 }).toBe(true);
      const firstPartial = stamps.find(([t]) => t === 'partial')![1];
      expect(firstPartial).toBeGreaterThanOrEqual(DEEPGRAM_TYPICAL.connectMs + DEEPGRAM_TYPICAL.interimMs - 5);
      s.end();
      await done;
    } finally {
      await slow.close();
    }
  });
});
