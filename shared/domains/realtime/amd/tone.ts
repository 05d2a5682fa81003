/**
 * Steady-tone ("beep") detection with a bank of Goertzel filters. An answering machine's record tone is one
 * sinusoid (400–2100 Hz, typically 0.15–1 s); speech spreads its energy over harmonics and formants that move
 * every few tens of milliseconds. A frame is tonal when one frequency holds most of its energy; a beep is a run of
 * tonal frames at the same frequency.
 */

/** Filters every 25 Hz: a tone between two filters is at most 12.5 Hz off one, which keeps ≥ 80 % of its power. */
const LOW_HZ = 350;
const HIGH_HZ = 2500;
const STEP_HZ = 25;

export interface ToneFrame {
  /** Strongest frequency in the frame (Hz). */
  hz: number;
  /** Share of the frame's energy at that frequency, 0–1 (1 = a pure tone centred on a filter). */
  purity: number;
}

/**
 * The dominant frequency of one frame and how pure it is. Goertzel power P at ω over N samples of a sinusoid of
 * amplitude A is (N·A/2)², and the frame's energy E = Σx² is N·A²/2, so 2P/(N·E) is 1 for a pure tone.
 */
export function dominantTone(frame: Int16Array, rate: number): ToneFrame {
  const n = frame.length;
  let energy = 0;
  for (let i = 0; i < n; i++) energy += frame[i]! * frame[i]!;
  if (energy === 0 || n === 0) return { hz: 0, purity: 0 };
  let bestHz = 0;
  let bestP = 0;
  const high = Math.min(HIGH_HZ, rate / 2 - STEP_HZ);
  for (let hz = LOW_HZ; hz <= high; hz += STEP_HZ) {
    const coeff = 2 * Math.cos((2 * Math.PI * hz) / rate);
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < n; i++) {
      const s0 = frame[i]! + coeff * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    const p = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    if (p > bestP) {
      bestP = p;
      bestHz = hz;
    }
  }
  return { hz: bestHz, purity: Math.min(1, (2 * bestP) / (n * energy)) };
}

export interface BeepOptions {
  /** Frame purity above which a frame counts as tonal. */
  minPurity: number;
  /** Consecutive tonal frames needed for a beep. */
  minFrames: number;
  /** Largest drift of the frequency within one beep (Hz). */
  maxDriftHz: number;
}

export const DEFAULT_BEEP: BeepOptions = { minPurity: 0.6, minFrames: 7, maxDriftHz: 50 };

/** Follows tonal runs frame by frame; reports a beep once a run is long enough, and when it ends. */
export class BeepTracker {
  private runStartMs = -1;
  private runHz = 0;
  private runFrames = 0;
  private reported = false;

  constructor(private readonly opts: BeepOptions = DEFAULT_BEEP) {}

  /**
   * One frame (starting at `atMs`, `loud` when it is above the speech floor). Returns 'beep' on the frame that
   * makes a run long enough, 'beep-end' on the first frame after a reported beep, else null.
   */
  push(tone: ToneFrame, loud: boolean, atMs: number): { event: 'beep' | 'beep-end'; startMs: number } | null {
    const tonal = loud && tone.purity >= this.opts.minPurity;
    if (tonal && this.runFrames > 0 && Math.abs(tone.hz - this.runHz) <= this.opts.maxDriftHz) {
      this.runFrames++;
    } else {
      const ended = this.reported ? { event: 'beep-end' as const, startMs: this.runStartMs } : null;
      this.reported = false;
      this.runFrames = tonal ? 1 : 0;
      this.runHz = tone.hz;
      this.runStartMs = atMs;
      if (ended) return ended;
    }
    if (!this.reported && this.runFrames >= this.opts.minFrames) {
      this.reported = true;
      return { event: 'beep', startMs: this.runStartMs };
    }
    return null;
  }

  /** True while a reported beep is still sounding. */
  get sounding(): boolean {
    return this.reported;
  }
}
