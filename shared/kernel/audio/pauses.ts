/**
 * Cutting a recording into pieces that can be decoded one after another: each cut lies in the longest pause of a
 * search window, so no piece is longer than a hard cap and cuts avoid words. Energy-based, no model: the pieces
 * are long (tens of seconds), so the quietest stretch of a window is what matters, not frame-exact speech/non-speech
 * decisions, and a deterministic pure function is cheap enough to run before the first piece is decoded.
 */

export interface PauseCutOptions {
  /** Shortest piece (seconds): the search for a pause starts this far after the previous cut. */
  minSeconds: number;
  /** Hard cap on a piece (seconds); at least twice `minSeconds`, so that the last piece can keep its minimum. */
  maxSeconds: number;
}

/** A piece of the recording in samples: `[start, end)`. */
export interface AudioPiece {
  start: number;
  end: number;
}

const FRAME_SECONDS = 0.01;
/** Frames of the moving average used when a window has no pause at all (100 ms: a gap between words, roughly). */
const SMOOTH_FRAMES = 10;

/**
 * Splits `samples` (mono, any rate) into consecutive pieces covering all of it. A recording no longer than
 * `maxSeconds` is one piece. Otherwise each cut is the middle of the longest pause (a run of frames below the
 * silence threshold) between `minSeconds` and `maxSeconds` after the previous cut, never leaving less than
 * `minSeconds` behind it; a window with no pause is cut at its quietest 100 ms. The threshold adapts to the
 * recording: 30 % of the way from its noise floor (5th percentile of 10 ms frame energies) to its speech level
 * (95th percentile), at least 3 dB above the floor, so digital silence and a hissing room both read as pauses.
 * Speech with almost no pauses (under 5 % of the frames) puts the floor inside speech; the cuts then fall in its
 * quieter stretches, which is all there is.
 */
export function cutAtPauses(samples: Int16Array, sampleRate: number, opts: PauseCutOptions): AudioPiece[] {
  if (!(opts.minSeconds > 0) || opts.maxSeconds < 2 * opts.minSeconds) {
    throw new RangeError(
      `cutAtPauses needs 0 < minSeconds and maxSeconds >= 2 × minSeconds (got ${JSON.stringify(opts)})`,
    );
  }
  const frameLen = Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
  const total = samples.length;
  const maxLen = Math.floor(opts.maxSeconds * sampleRate);
  if (total <= maxLen) return [{ start: 0, end: total }];
  const minFrames = Math.ceil((opts.minSeconds * sampleRate) / frameLen);
  const maxFrames = Math.floor(maxLen / frameLen);
  const db = frameEnergies(samples, frameLen);
  const quiet = silenceThreshold(db);
  const pieces: AudioPiece[] = [];
  let start = 0; // in frames
  while (total - start * frameLen > maxLen) {
    const from = start + minFrames;
    const to = Math.min(start + maxFrames, db.length - minFrames);
    const cut = longestPauseMiddle(db, quiet, from, to) ?? quietestFrame(db, from, to);
    pieces.push({ start: start * frameLen, end: cut * frameLen });
    start = cut;
  }
  pieces.push({ start: start * frameLen, end: total });
  return pieces;
}

/** Energy of each whole frame in dB (int16 scale, +1 so digital silence is 0 dB rather than -∞). */
export function frameEnergies(samples: Int16Array, frameLen: number): Float64Array {
  const n = Math.floor(samples.length / frameLen);
  const out = new Float64Array(n);
  for (let f = 0; f < n; f++) {
    let sum = 0;
    for (let i = f * frameLen; i < (f + 1) * frameLen; i++) sum += samples[i]! * samples[i]!;
    out[f] = 10 * Math.log10(sum / frameLen + 1);
  }
  return out;
}

function silenceThreshold(db: Float64Array): number {
  const sorted = Float64Array.from(db).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const floor = at(0.05);
  return floor + Math.max(3, 0.3 * (at(0.95) - floor));
}

/** Middle of the longest run of quiet frames inside frames `[from, to]` (runs clipped to it); later wins ties. */
function longestPauseMiddle(db: Float64Array, quiet: number, from: number, to: number): number | null {
  let best: { start: number; len: number } | null = null;
  let runStart = -1;
  for (let f = from; f <= to + 1; f++) {
    const isQuiet = f <= to && db[f]! < quiet;
    if (isQuiet && runStart < 0) runStart = f;
    if (!isQuiet && runStart >= 0) {
      const len = f - runStart;
      if (!best || len >= best.len) best = { start: runStart, len };
      runStart = -1;
    }
  }
  return best ? best.start + Math.floor(best.len / 2) : null;
}

/** The frame at the centre of the quietest `SMOOTH_FRAMES` stretch inside `[from, to]` (later wins ties). */
function quietestFrame(db: Float64Array, from: number, to: number): number {
  let best = from;
  let bestSum = Infinity;
  const half = Math.floor(SMOOTH_FRAMES / 2);
  for (let f = from; f <= to; f++) {
    let sum = 0;
    for (let k = Math.max(0, f - half); k <= Math.min(db.length - 1, f + half); k++) sum += db[k]!;
    if (sum <= bestSum) {
      bestSum = sum;
      best = f;
    }
  }
  return best;
}
