import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SttStreamEvent } from '../../../shared/engines/stt/types.ts';
import { OpenAiStt } from '../../../shared/engines/stt/vendors/openai.ts';
import type { OpenAiRealtimeStreamOptions } from '../../../shared/engines/stt/vendors/openai-realtime.ts';
import { silence, tone } from '../../../support/doubles/audio.ts';
import type { LiveDouble } from '../../../shared/domains/agent-tests/simulators/live-double.ts';
import { startOpenAiRealtimeDouble } from '../../../support/doubles/openai-realtime.ts';
import { drain, frames, mulaw } from './stream-helpers.ts';

type Final = Extract<SttStreamEvent, { type: 'final' }>;

describe('openai live STT (Realtime API transcription session)', () => {
  let rt: LiveDouble & { sessions: Record<string, unknown>[] };
  let stt: OpenAiStt;
  beforeAll(async () => {
    rt = await startOpenAiRealtimeDouble({ script: ['Hello there.', 'Book a table for two.'] });
    stt = new OpenAiStt({ baseUrl: `${rt.url}/v1` });
  });
  afterAll(() => rt.close());

  it('configures a transcription session, resamples 16 kHz PCM to 24 kHz and yields partials and timed finals', async () => {
    expect(stt.capabilities.streaming).toBe(true);
    const s = stt.stream({ sampleRate: 16000, language: 'en', apiKey: rt.key });
    const events = drain(s.events);
    const audio = Buffer.concat([tone(16000, 0.6), silence(16000, 0.7), tone(16000, 0.4)]);
    for (const f of frames(audio, 640)) s.write(f);
    s.end();
    const got = await events;
    const finals = got.filter((e): e is Final => e.type === 'final');
    expect(finals.map((f) => f.text)).toEqual(['Hello there.', 'Book a table for two.']);
    expect(finals[0]!.start).toBeCloseTo(0, 1);
    expect(finals[0]!.end).toBeCloseTo(0.6, 1);
    expect(got.find((e) => e.type === 'partial')).toEqual({ type: 'partial', text: 'Hello' });

    const conn = rt.connections.at(-1)!;
    expect(conn.headers.authorization).toBe(`Bearer ${rt.key}`);
    expect(conn.query.get('intent')).toBe('transcription');
    expect(conn.controls[0]).toBe('session.update');
    expect(rt.sessions.at(-1)).toMatchObject({
      type: 'transcription',
      audio: {
        input: {
          format: { type: 'audio/pcm', rate: 24000 },
          transcription: { model: 'gpt-4o-transcribe', language: 'en' },
          turn_detection: { type: 'server_vad' },
        },
      },
    });
    // 16 kHz → 24 kHz: half as many bytes again (the resampler's flush included)
    expect(Math.abs(conn.audioBytes - audio.length * 1.5)).toBeLessThan(64);
    expect(conn.controls.at(-1)).toBe('input_audio_buffer.commit');
  });

  it('passes 8 kHz μ-law through as audio/pcmu, committing the turn still open at end()', async () => {
    const opts: OpenAiRealtimeStreamOptions = { sampleRate: 8000, language: '', apiKey: rt.key, encoding: 'mulaw' };
    const s = stt.stream(opts);
    const events = drain(s.events);
    const audio = mulaw(tone(8000, 0.5)); // no trailing silence: only the explicit commit ends the turn
    for (const f of frames(audio, 160)) s.write(f);
    s.end();
    const finals = (await events).filter((e) => e.type === 'final');
    expect(finals).toHaveLength(1);
    expect(rt.sessions.at(-1)).toMatchObject({ audio: { input: { format: { type: 'audio/pcmu' } } } });
    expect(rt.connections.at(-1)!.audioBytes).toBe(audio.length);
  });
});
