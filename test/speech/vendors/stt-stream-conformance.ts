import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SttEngine, SttStreamEvent } from '../../../shared/engines/stt/types.ts';
import { silence, tone } from '../../../support/doubles/audio.ts';
import type { LiveDouble } from '../../../shared/domains/agent-tests/simulators/live-double.ts';
import { engineError } from './conformance.ts';
import { drain, frames } from './stream-helpers.ts';

/**
 * The conformance suite every live (streaming) STT adapter runs against its WebSocket double: 8 kHz phone PCM in
 * 20 ms frames gives partials then one timed final per utterance, `end()` flushes and ends the events normally,
 * `close()` ends them at once, an aborted signal fails them as `aborted`, a refused key is a permanent auth
 * error and an abnormal close a retryable one.
 */
export interface SttStreamCase {
  provider: string;
  /** A double whose script is ['Hello there.', 'Book a table for two.']. */
  startDouble(script: string[]): Promise<LiveDouble>;
  make(double: LiveDouble): SttEngine;
}

type Final = Extract<SttStreamEvent, { type: 'final' }>;

export function sttStreamConformance(c: SttStreamCase): void {
  describe(`${c.provider} live STT (stream conformance)`, () => {
    let double: LiveDouble;
    let engine: SttEngine;
    beforeAll(async () => {
      double = await c.startDouble(['Hello there.', 'Book a table for two.']);
      engine = c.make(double);
    });
    afterAll(() => double.close());

    it('declares streaming and turns 8 kHz phone PCM into partials and one timed final per utterance', async () => {
      expect(engine.capabilities.streaming).toBe(true);
      const s = engine.stream({ sampleRate: 8000, language: 'en', apiKey: double.key });
      const events = drain(s.events);
      const audio = Buffer.concat([tone(8000, 0.6), silence(8000, 0.8), tone(8000, 0.5), silence(8000, 0.8)]);
      for (const f of frames(audio, 320)) s.write(f);
      s.end();
      const got = await events;
      const finals = got.filter((e): e is Final => e.type === 'final');
      expect(finals.map((f) => f.text)).toEqual(['Hello there.', 'Book a table for two.']);
      expect(got.findIndex((e) => e.type === 'partial')).toBeLessThan(got.findIndex((e) => e.type === 'final'));
      expect(finals[0]!.start).toBeCloseTo(0, 1);
      expect(finals[0]!.end).toBeCloseTo(0.6, 1);
      expect(finals[1]!.start).toBeGreaterThan(finals[0]!.end);
    });

    it('close() ends the events at once; an aborted signal fails them as aborted', async () => {
      const s = engine.stream({ sampleRate: 8000, language: 'en', apiKey: double.key });
      const events = drain(s.events);
      s.close();
      expect(await events).toEqual([]);
      const ac = new AbortController();
      const a = engine.stream({ sampleRate: 8000, language: 'en', apiKey: double.key, signal: ac.signal });
      const aborted = drain(a.events);
      ac.abort();
      expect(await engineError(aborted)).toMatchObject({ provider: c.provider, kind: 'aborted' });
    });

    it('maps a refused key to permanent auth and an abnormal close to a retryable error', async () => {
      const bad = engine.stream({ sampleRate: 8000, language: 'en', apiKey: 'wrong' });
      expect(await engineError(drain(bad.events))).toMatchObject({ kind: 'auth', retryable: false, status: 401 });
      const n = double.connections.length;
      const s = engine.stream({ sampleRate: 8000, language: 'en', apiKey: double.key });
      const events = drain(s.events);
      for (const f of frames(tone(8000, 0.2), 320)) s.write(f);
      await expect.poll(() => double.connections[n]?.audioBytes ?? 0).toBeGreaterThan(0);
      double.dropAll(1011, 'internal error');
      expect(await engineError(events)).toMatchObject({ kind: 'upstream', retryable: true });
    });

    it('needs a key before opening a socket', () => {
      const before = double.connections.length;
      expect(() => engine.stream({ sampleRate: 8000, language: 'en' })).toThrow(/key/);
      expect(double.connections.length).toBe(before);
    });
  });
}
