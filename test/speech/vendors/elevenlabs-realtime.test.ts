import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SttStreamEvent } from '../../../shared/engines/stt/types.ts';
import { ElevenLabsStt } from '../../../shared/engines/stt/vendors/elevenlabs.ts';
import type { ElevenLabsRealtimeStreamOptions } from '../../../shared/engines/stt/vendors/elevenlabs-realtime.ts';
import { silence, tone } from '../../../support/doubles/audio.ts';
import { startElevenLabsRealtimeDouble } from '../../../support/doubles/elevenlabs-realtime.ts';
import type { LiveDouble } from '../../../shared/domains/agent-tests/simulators/live-double.ts';
import { drain, frames, mulaw } from './stream-helpers.ts';

type Final = Extract<SttStreamEvent, { type: 'final' }>;

describe('elevenlabs live STT (Scribe realtime)', () => {
  let el: LiveDouble;
  let stt: ElevenLabsStt;
  beforeAll(async () => {
    el = await startElevenLabsRealtimeDouble({ script: ['Hello there.'] });
    stt = new ElevenLabsStt({ baseUrl: el.url });
  });
  afterAll(() => el.close());

  it('opens a VAD-committed session with timestamps and sends base64 audio chunks, committing at end()', async () => {
    const s = stt.stream({ sampleRate: 16000, language: 'en', apiKey: el.key });
    const events = drain(s.events);
    for (const f of frames(tone(16000, 0.5), 640)) s.write(f);
    s.end(); // no trailing silence: the committing chunk ends the turn
    const finals = (await events).filter((e): e is Final => e.type === 'final');
    expect(finals).toHaveLength(1);
    expect(finals[0]!.words?.map((w) => w.word)).toEqual(['Hello', 'there.']);
    const conn = el.connections.at(-1)!;
    expect(conn.headers['xi-api-key']).toBe(el.key);
    expect(Object.fromEntries(conn.query)).toEqual({
      model_id: 'scribe_v2_realtime',
      audio_format: 'pcm_16000',
      commit_strategy: 'vad',
      include_timestamps: 'true',
      language_code: 'en',
    });
    expect(new Set(conn.controls)).toEqual(new Set(['input_audio_chunk']));
    expect(conn.audioBytes).toBe(16000);
  });

  it('passes 8 kHz μ-law as ulaw_8000 and refuses rates the API does not take', async () => {
    const opts: ElevenLabsRealtimeStreamOptions = { sampleRate: 8000, language: '', apiKey: el.key, encoding: 'mulaw' };
    const s = stt.stream(opts);
    const events = drain(s.events);
    for (const f of frames(mulaw(Buffer.concat([tone(8000, 0.4), silence(8000, 0.6)])), 160)) s.write(f);
    s.end();
    expect((await events).filter((e) => e.type === 'final')).toHaveLength(1);
    expect(el.connections.at(-1)!.query.get('audio_format')).toBe('ulaw_8000');
    expect(() => stt.stream({ sampleRate: 11025, language: '', apiKey: el.key })).toThrow(/11025/);
  });
});
