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
