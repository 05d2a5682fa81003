import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SttStreamEvent } from '../../../shared/engines/stt/types.ts';
import { AssemblyAiStt, type AssemblyAiStreamOptions } from '../../../shared/engines/stt/vendors/assemblyai.ts';
import { startAssemblyAiStreamDouble } from '../../../support/doubles/assemblyai-stream.ts';
import type { LiveDouble } from '../../../shared/domains/agent-tests/simulators/live-double.ts';
import { silence, tone } from '../../../support/doubles/audio.ts';
import { engineError } from './conformance.ts';
import { drain, frames, mulaw } from './stream-helpers.ts';

describe('assemblyai live STT (Universal-Streaming v3)', () => {
  let aai: LiveDouble;
  let stt: AssemblyAiStt;
  beforeAll(async () => {
    aai = await startAssemblyAiStreamDouble({ script: ['Hi, my name is Sonny.', 'I am a voice agent.'] });
    stt = new AssemblyAiStt({ baseUrl: 'http://127.0.0.1:9', streamingUrl: aai.url.replace(/^http/, 'ws') });
  });
  afterAll(() => aai.close());

  it('streams 16 kHz PCM: partials from unfinished turns, one final per formatted end of turn', async () => {
    const s = stt.stream({ sampleRate: 16000, language: 'en', apiKey: aai.key });
    const events = drain(s.events);
    const audio = Buffer.concat([tone(16000, 0.6), silence(16000, 0.6), tone(16000, 0.4)]);
    for (const f of frames(audio, 640)) s.write(f); // 20 ms frames: the adapter batches them to 50 ms
    s.end();
    const got = await events;
    const finals = got.filter((e): e is Extract<SttStreamEvent, { type: 'final' }> => e.type === 'final');
    expect(finals.map((f) => f.text)).toEqual(['Hi, my name is Sonny.', 'I am a voice agent.']);
    expect(got[0]).toEqual({ type: 'partial', text: 'Hi,' });
    expect(finals[0]!.start).toBeCloseTo(0, 1);
    expect(finals[0]!.end).toBeCloseTo(0.6, 1);
    expect(finals[0]!.words).toHaveLength(5);
    const conn = aai.connections.at(-1)!;
    expect(conn.headers.authorization).toBe(aai.key);
    expect(Object.fromEntries(conn.query)).toEqual({
      sample_rate: '16000',
      encoding: 'pcm_s16le',
      format_turns: 'true',
    });
    expect(conn.controls).toEqual(['Terminate']);
    // Everything arrived; only the last message may carry silence padding up to 50 ms (1600 bytes at 16 kHz).
    expect(conn.audioBytes).toBeGreaterThanOrEqual(audio.length);
    expect(conn.audioBytes).toBeLessThan(audio.length + 1600);
    await expect.poll(() => conn.closeCode).toBe(1000); // no 3007 "input duration violation"
  });

  it('takes 8 kHz μ-law and asks for the multilingual model for other languages', async () => {
    const opts: AssemblyAiStreamOptions = { sampleRate: 8000, language: 'es', apiKey: aai.key, encoding: 'pcm_mulaw' };
    const s = stt.stream(opts);
    const events = drain(s.events);
    for (const f of frames(mulaw(Buffer.concat([tone(8000, 0.5), silence(8000, 0.51)])), 160)) s.write(f);
    s.end();
    expect((await events).filter((e) => e.type === 'final')).toHaveLength(1);
    expect(Object.fromEntries(aai.connections.at(-1)!.query)).toMatchObject({
      encoding: 'pcm_mulaw',
      speech_model: 'universal-streaming-multilingual',
    });
  });

  it('maps a refused handshake (401) to permanent auth and a policy close (1008) to permanent', async () => {
    const bad = stt.stream({ sampleRate: 16000, language: 'en', apiKey: 'wrong' });
    expect(await engineError(drain(bad.events))).toMatchObject({ kind: 'auth', retryable: false, status: 401 });
    const n = aai.connections.length;
    const s = stt.stream({ sampleRate: 16000, language: 'en', apiKey: aai.key });
    const events = drain(s.events);
    s.write(tone(16000, 0.1));
    await expect.poll(() => aai.connections[n]?.audioBytes ?? 0).toBeGreaterThan(0);
    aai.dropAll(1008, 'Unauthorized connection: invalid API key');
    expect(await engineError(events)).toMatchObject({ kind: 'auth', retryable: false });
  });
});
