/**
 * How the end of an utterance sounds, from the audio alone and cheaply (plain TypeScript, no model weights): the
 * pitch contour of the last voiced stretch against the speaker's own level (a statement falls at its end), final
 * lengthening (the last syllable before a turn end is drawn out) and how the energy fades (a finished phrase decays;
 * a speaker who stops to think is often cut off mid-level). Computed at most once per pause on the last ~1.5 s of
 * speech, not per frame, and only when the turn decision reads it: a few milliseconds of CPU per reading at 8 kHz.
 */

/** The cues and what they add up to. */
export interface EndProsody {
  /** Pitch of the last voiced frames against the median of the stretch, in semitones (negative = falling). */
  finalPitchSt: number | null;
  /** Length of the last voiced run against the median of the earlier ones (> 1 = drawn out). */
  lengthening: number | null;
  /** How far (dB) the energy of the last voiced run fell from its peak to its end. */
  energyFallDb: number | null;
  /** -1 (sounds like more is coming) … +1 (sounds finished); 0 when there is too little voiced speech to tell. */
  score: number;
}

const FRAME_MS = 20;
const WINDOW_MS = 32;
const MIN_F0 = 70;
const MAX_F0 = 400;
/** RMS (int16 scale) under which a frame is not voiced speech (≈ −50 dBFS). */
const VOICED_RMS = 100;
/** Normalised autocorrelation above which a frame is voiced. */
const VOICING = 0.5;

/**
 * Running sums of x[i]² (`sq[k]` = the sum of the first k squares), so that any window's energy is one
 * subtraction. Exact: int16 squares summed over minutes of audio stay far below 2^53.
 */
function squareSums(x: Int16Array): Float64Array {
  const sq = new Float64Array(x.length + 1);
  let s = 0;
  for (let i = 0; i < x.length; i++) {
    s += x[i]! * x[i]!;
    sq[i + 1] = s;
  }
  return sq;
}

/** Normalised autocorrelation of `x[from, to)` at `lag` (`sq`: x's running squares). */
function corrAt(x: Int16Array, from: number, to: number, lag: number, sq: Float64Array): number {
  let xy = 0;
  for (let i = from, j = from + lag; j < to; i++, j++) xy += x[i]! * x[j]!;
  const xx = sq[to - lag]! - sq[from]!;
  const yy = sq[to]! - sq[from + lag]!;
  return xx > 0 && yy > 0 ? xy / Math.sqrt(xx * yy) : 0;
}

/**
 * F0 (Hz) of `x[from, to)` by normalised autocorrelation, or 0 when it is not voiced. Lags are searched every 2
 * samples, then refined around the best one: half the work, the same estimate. The energies of the two shifted
 * windows come from running sums (`sq`, made once per signal), so a lag costs one multiply-add per sample: this
 * runs for every voiced 20 ms frame of the last 1.2 s each time the turn decision reads an end.
 */
export function pitchOf(x: Int16Array, from: number, to: number, rate: number, sq = squareSums(x)): number {
  const minLag = Math.floor(rate / MAX_F0);
  const maxLag = Math.min(Math.ceil(rate / MIN_F0), Math.floor((to - from) / 2));
  let best = 0;
  let bestLag = 0;
  for (let lag = minLag; lag <= maxLag; lag += 2) {
    const r = corrAt(x, from, to, lag, sq);
    if (r > best) {
      best = r;
      bestLag = lag;
    }
  }
  const coarse = bestLag;
  for (let lag = coarse - 1; lag <= coarse + 1; lag += 2) {
    if (lag < minLag || lag > maxLag) continue;
    const r = corrAt(x, from, to, lag, sq);
    if (r > best) {
      best = r;
      bestLag = lag;
    }
  }
  return best >= VOICING && bestLag > 0 ? rate / bestLag : 0;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/**
 * The end-of-utterance cues of `pcm` (int16 at `rate`), which should end at (or just after) the last speech.
 * Each cue votes: falling pitch +, rising −; a drawn-out last run +, a clipped one −; a fading end +, an abrupt one −.
 */
export function endOfUtteranceProsody(pcm: Int16Array, rate: number): EndProsody {
  const hop = Math.round((rate * FRAME_MS) / 1000);
  const win = Math.round((rate * WINDOW_MS) / 1000);
  const sq = squareSums(pcm);
  const frames: { f0: number; rms: number }[] = [];
  for (let at = 0; at + win <= pcm.length; at += hop) {
    const e = Math.sqrt((sq[at + win]! - sq[at]!) / win);
    frames.push({ rms: e, f0: e >= VOICED_RMS ? pitchOf(pcm, at, at + win, rate, sq) : 0 });
  }
  // Voiced runs (consecutive voiced frames), the last one being the utterance's last syllable(s).
  const runs: { from: number; to: number }[] = [];
  frames.forEach((f, i) => {
    if (f.f0 <= 0) return;
    const last = runs.at(-1);
    if (last && last.to === i) last.to = i + 1;
    else runs.push({ from: i, to: i + 1 });
  });
  const voiced = frames.filter((f) => f.f0 > 0).map((f) => f.f0);
  if (runs.length === 0 || voiced.length < 4)
    return { finalPitchSt: null, lengthening: null, energyFallDb: null, score: 0 };

  const end = runs.at(-1)!;
  const tail = frames.slice(Math.max(end.from, end.to - 3), end.to).map((f) => f.f0);
  const finalPitchSt = 12 * Math.log2(median(tail) / median(voiced));
  const earlier = runs.slice(0, -1).map((r) => r.to - r.from);
  const lengthening = earlier.length >= 2 ? (end.to - end.from) / Math.max(1, median(earlier)) : null;
  const endRms = frames.slice(end.from, end.to).map((f) => f.rms);
  const peak = Math.max(...endRms);
  const energyFallDb = 20 * Math.log10(peak / Math.max(1, endRms.at(-1)!));

  let score = clamp(-finalPitchSt / 4, -0.5, 0.5);
  if (lengthening !== null) score += clamp((lengthening - 1) * 0.3, -0.2, 0.3);
  score += energyFallDb >= 6 ? 0.2 : energyFallDb < 2 ? -0.2 : 0;
  return { finalPitchSt, lengthening, energyFallDb, score: clamp(score, -1, 1) };
}

/**
 * The caller's most recent audio (a ring of `keepMs`), so the prosody of an utterance's end can be read when the
 * caller pauses. Times are the stream's audio milliseconds, as the VAD's.
 */
export class RecentAudio {
  private readonly ring: Int16Array;
  private written = 0;

  constructor(
    readonly rate: number,
    keepMs = 2000,
  ) {
    this.ring = new Int16Array(Math.round((rate * keepMs) / 1000));
  }

  /** Every caller frame goes through here: block copies (at most two, where the ring wraps), no per-sample index math. */
  push(samples: Int16Array): void {
    const size = this.ring.length;
    // More than the ring holds: only its last `size` samples can be kept.
    const src = samples.length > size ? samples.subarray(samples.length - size) : samples;
    const at = (this.written + samples.length - src.length) % size;
    const first = Math.min(src.length, size - at);
    this.ring.set(src.subarray(0, first), at);
    if (first < src.length) this.ring.set(src.subarray(first), 0);
    this.written += samples.length;
  }

  /** Up to `spanMs` of audio ending at audio time `endMs` (what is still kept of it). */
  slice(endMs: number, spanMs: number): Int16Array {
    const end = Math.min(this.written, Math.round((endMs * this.rate) / 1000));
    const start = Math.max(0, this.written - this.ring.length, end - Math.round((spanMs * this.rate) / 1000));
    const out = new Int16Array(Math.max(0, end - start));
    const size = this.ring.length;
    const at = start % size;
    const first = Math.min(out.length, size - at);
    out.set(this.ring.subarray(at, at + first));
    if (first < out.length) out.set(this.ring.subarray(0, out.length - first), first);
    return out;
  }
}
