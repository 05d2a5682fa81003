import { describe, expect, it } from 'vitest';
import { cutAtPauses, type AudioPiece } from '../../shared/kernel/audio/index.ts';

const RATE = 16000;

/** Deterministic noise (a linear congruential generator): "speech" for an energy-based cutter. */
function noise(seconds: number, amp: number, seed = 1): Int16Array {
  let x = seed;
  return Int16Array.from({ length: Math.round(seconds * RATE) }, () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return Math.round(((x / 0x7fffffff) * 2 - 1) * amp);
  });
}

/** Alternating stretches: [speech seconds, pause seconds, speech seconds, …] over a noise floor of `floor`. */
function recording(layout: number[], floor = 0): Int16Array {
  const parts = layout.map((s, i) => {
    const loud = i % 2 === 0;
    if (!loud && floor === 0) return new Int16Array(Math.round(s * RATE));
    return noise(s, loud ? 8000 : floor, i + 1);
  });
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function expectCovering(pieces: AudioPiece[], total: number, maxSeconds: number): void {
  expect(pieces[0]!.start).toBe(0);
  expect(pieces.at(-1)!.end).toBe(total);
  for (let i = 1; i < pieces.length; i++) expect(pieces[i]!.start).toBe(pieces[i - 1]!.end);
  for (const p of pieces) expect(p.end - p.start).toBeLessThanOrEqual(maxSeconds * RATE);
}

describe('cutAtPauses', () => {
  const opts = { minSeconds: 10, maxSeconds: 30 };

  it('keeps a recording up to the cap whole', () => {
    const x = recording([29.9]);
    expect(cutAtPauses(x, RATE, opts)).toEqual([{ start: 0, end: x.length }]);
  });

  it('cuts in the middle of the longest pause of the window, not at the first or the last one', () => {
    // Pauses at 8 s (2 s: before the window), 14 s (0.4 s), 20 s (1.2 s) and 27 s (0.3 s); 45 s in all.
    const x = recording([8, 2, 4, 0.4, 5.6, 1.2, 5.8, 0.3, 17.7]);
    const pieces = cutAtPauses(x, RATE, opts);
    expectCovering(pieces, x.length, 30);
    expect(pieces).toHaveLength(2);
    const cut = pieces[0]!.end / RATE;
    expect(cut).toBeGreaterThan(20.5);
    expect(cut).toBeLessThan(20.7);
  });

  it('finds pauses over a noise floor, not only in digital silence', () => {
    // Pauses at 6, 12.6, 18.6 (1.5 s, the longest), 26.1 and 32.7 s, all at amplitude 300 (≈ 45 dB).
    const x = recording([6, 0.6, 6, 0.6, 5.4, 1.5, 6, 0.6, 6, 0.6, 11.1], 300);
    const cut = cutAtPauses(x, RATE, opts)[0]!.end / RATE;
    expect(cut).toBeGreaterThan(19.25);
    expect(cut).toBeLessThan(19.45);
  });

  it('still cuts speech without any pause, within the cap, and covers long recordings end to end', () => {
    const x = noise(95, 8000);
    const pieces = cutAtPauses(x, RATE, opts);
    expectCovering(pieces, x.length, 30);
    expect(pieces.length).toBeGreaterThanOrEqual(4);
    // The last piece keeps its minimum: no sliver of audio decoded on its own.
    for (const p of pieces) expect(p.end - p.start).toBeGreaterThanOrEqual(10 * RATE);
  });

  it('refuses a cap shorter than twice the minimum', () => {
    expect(() => cutAtPauses(new Int16Array(10), RATE, { minSeconds: 10, maxSeconds: 15 })).toThrow(RangeError);
  });
});
