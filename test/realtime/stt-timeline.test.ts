import { describe, expect, it } from 'vitest';
import { spreadWords, streamingTranscripts } from '../../benchmarks/robustness/stt-timeline.ts';

// bench:robustness's turn-end path times the corpus's known words over the caller's voiced audio, and sends them to
// the turn stage as a streaming STT would: wrong timing here would put a final inside a word or miss a pause.
describe('bench:robustness STT timeline', () => {
  it('puts each pause between two words, spreading each stretch by letters', () => {
    // "eight of spades [pause] four of clubs": two voiced stretches of 600 and 500 ms with 300 ms between them.
    const words = spreadWords('eight of spades four of clubs', [
      [1000, 1600],
      [1900, 2400],
    ]);
    expect(words.map((w) => w.word)).toEqual(['eight', 'of', 'spades', 'four', 'of', 'clubs']);
    // Every word lies inside one stretch; the first stretch's words end at its end, the second's begin at its start.
    expect(words[2]).toMatchObject({ word: 'spades', endMs: 1600 });
    expect(words[3]).toMatchObject({ word: 'four', startMs: 1900 });
    // Within a stretch by letters: "eight" (5) of 13 letters → 5/13 of 600 ms.
    expect(words[0]).toEqual({ word: 'eight', startMs: 1000, endMs: Math.round(1000 + (600 * 5) / 13) });
    for (const w of words) expect(w.endMs).toBeGreaterThan(w.startMs);
  });

  it('gives a stretch too short for any word none, and no words to no speech', () => {
    const words = spreadWords('I would like a cleaning', [
      [0, 1000],
      [1100, 1120], // a click: 20 ms of 1020
    ]);
    expect(words.every((w) => w.endMs <= 1000)).toBe(true);
    expect(spreadWords('hello', [])).toEqual([]);
  });

  it('sends an interim as each word ends and a final at a pause and at the end, all lagMs late', () => {
    const words = spreadWords('eight of spades four of clubs', [
      [1000, 1600],
      [1900, 2400],
    ]);
    const out = streamingTranscripts(words, { lagMs: 200, finalGapMs: 200, punctuate: 'end' });
    const finals = out.filter((t) => t.final);
    expect(finals).toEqual([
      { atMs: 1800, text: 'eight of spades', final: true, endMs: 1600 },
      { atMs: 2600, text: 'four of clubs.', final: true, endMs: 2400 },
    ]);
    // Interims carry the words since the last final, arriving lagMs after their last word.
    expect(out.filter((t) => !t.final).map((t) => t.text)).toEqual(['eight', 'eight of', 'four', 'four of']);
    for (const t of out) expect(t.atMs).toBe(t.endMs + 200);
  });

  it('finalizes only at pauses as long as the STT endpointing, and punctuates as asked', () => {
    const words = spreadWords('eight of spades four of clubs', [
      [1000, 1600],
      [1750, 2400], // a 150 ms pause: under a 200 ms endpointing
    ]);
    expect(
      streamingTranscripts(words, { lagMs: 0, finalGapMs: 200, punctuate: 'none' })
        .filter((t) => t.final)
        .map((t) => t.text),
    ).toEqual(['eight of spades four of clubs']);
    const gapped = spreadWords('eight of spades four of clubs', [
      [1000, 1600],
      [1900, 2400],
    ]);
    expect(
      streamingTranscripts(gapped, { lagMs: 0, finalGapMs: 200, punctuate: 'every' })
        .filter((t) => t.final)
        .map((t) => t.text),
    ).toEqual(['eight of spades.', 'four of clubs.']);
  });
});
