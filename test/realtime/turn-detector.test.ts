import { describe, expect, it } from 'vitest';
import { TurnDetector } from '../../workers/realtime/pipeline/input/turn-detector.ts';
import { isBackchannel } from '../../workers/realtime/pipeline/words.ts';

describe('turn detector', () => {
  it('ignores short noises, starts after the minimum and ends after the endpointing silence', () => {
    const d = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: 300 });
    const events: unknown[] = [];
    let t = 0;
    const feed = (prob: number, n: number) => {
      for (let i = 0; i < n; i++, t += 20) {
        const e = d.push(prob, t, 20);
        if (e) events.push(e);
      }
    };
    feed(0.9, 2); // 40 ms click
    feed(0.1, 10);
    expect(events).toEqual([]);
    feed(0.9, 25); // speech from 240 ms to 740 ms
    feed(0.1, 20);
    expect(events).toEqual([
      { type: 'start', onsetMs: 240, atMs: 300 },
      { type: 'end', onsetMs: 240, lastSpeechMs: 740, atMs: 1040 },
    ]);
  });

  it('a speech frame after startMs of sound over the floor starts speech at once; without that sound it needs startMs of speech', () => {
    // Silero's scores for flite's "Wait, stop." at 8 kHz: the "W" glide (sound over the floor since 0 ms, scored
    // under the threshold), then the vowel at 224 ms.
    const wait = [0.25, 0.06, 0.05, 0.04, 0.02, 0.01, 0.01, 0.78, 0.99];
    const d = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: 300 });
    const events = wait.map((p, i) => d.push(p, i * 32, 32, 0)).filter(Boolean);
    expect(events).toEqual([{ type: 'start', onsetMs: 224, atMs: 256 }]);

    // The same scores with the sound beginning at each frame (no floor known): the second speech frame starts it.
    const q = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: 300 });
    expect(wait.map((p, i) => q.push(p, i * 32, 32)).filter(Boolean)).toEqual([
      { type: 'start', onsetMs: 224, atMs: 288 },
    ]);

    // A click: one loud frame out of silence is not speech, whatever it scores.
    const c = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: 300 });
    expect([0.9, 0.1, 0.1].map((p, i) => c.push(p, i * 32, 32, i * 32)).filter(Boolean)).toEqual([]);
  });

  it('ends on known silence before the next frame completes, and only once', () => {
    const d = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: 300 });
    for (let t = 0; t < 320; t += 32) d.push(0.9, t, 32); // speech until 320 ms
    for (let t = 320; t < 608; t += 32) expect(d.push(0.1, t, 32)).toBeNull(); // 288 ms of silence
    expect(d.silentUntil(615)).toBeNull(); // 295 ms: not yet
    expect(d.silentUntil(620)).toEqual({ type: 'end', onsetMs: 0, lastSpeechMs: 320, atMs: 620 });
    expect(d.inSpeech).toBe(false);
    expect(d.push(0.1, 608, 32)).toBeNull(); // the frame completing later does not end it again
    expect(d.silentUntil(700)).toBeNull();
  });

  it('tells backchannels from real interruptions', () => {
    for (const b of ['yeah', 'Ok.', 'uh-huh', 'I see', 'got it', 'yeah yeah']) expect(isBackchannel(b)).toBe(true);
    // Hums, however the STT spells them.
    for (const b of ['Mm-hm.', 'mhmm', 'Mmhmm', 'hm', 'Hmmm.', 'um-hum', 'uhhuh', 'mm'])
      expect(isBackchannel(b)).toBe(true);
    for (const b of ['mom', 'hum', 'ham', 'him']) expect(isBackchannel(b)).toBe(false);
    for (const s of ['wait, stop', 'no that is wrong', 'can you repeat', 'yeah but what about Tuesday', ''])
      expect(isBackchannel(s)).toBe(false);
  });
});
