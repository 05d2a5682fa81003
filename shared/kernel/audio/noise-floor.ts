import { SILENCE_RMS } from './pcm.ts';

/** How far over the line's floor a frame must be to be possibly speech (a frame under it is silence). */
export const SPEECH_OVER_FLOOR_DB = 3;
/** The floor is the quietest frame of about this long (minimum statistics: speech has gaps well within it). */
const WINDOW_MS = 3000;
const SUB_WINDOWS = 6;

/**
 * The line's noise floor, tracked by minimum statistics (Martin 2001, simplified): the lowest frame RMS over the
 * last `WINDOW_MS`, kept as the minima of `SUB_WINDOWS` sub-windows so a frame costs a compare, not a search. The
 * floor falls at once to a quieter frame (a call's first frame of line noise sets it) and rises only when the
 * quiet stretch that set it ages out of the window, so a caller talking for seconds does not lift it: the gaps
 * between words keep it down.
 *
 * `gateRms` is the silence gate the VAD and the STT stage share: audio under it is silence without further
 * analysis. It is `SPEECH_OVER_FLOOR_DB` over the floor, and never under the absolute `SILENCE_RMS` (−56 dBFS), so
 * a clean line (digital silence between words, floor near 0) gates exactly as before, and a noisy line's hiss,
 * hum or crowd — everything at its floor — is not scored as speech.
 */
export class NoiseFloor {
  private readonly minima: Float64Array;
  private readonly framesPerSub: number;
  private filled = 0;
  private head = 0;
  private current = Infinity;
  private inCurrent = 0;
  private floor = Infinity;
  private readonly factor = 10 ** (SPEECH_OVER_FLOOR_DB / 20);

  /** `frameMs`: how long each frame pushed is. */
  constructor(frameMs: number) {
    this.minima = new Float64Array(SUB_WINDOWS);
    this.framesPerSub = Math.max(1, Math.round(WINDOW_MS / SUB_WINDOWS / frameMs));
  }

  /** One frame's RMS (16-bit scale). */
  push(rms: number): void {
    if (rms < this.current) this.current = rms;
    if (rms < this.floor) this.floor = rms;
    if (++this.inCurrent < this.framesPerSub) return;
    // The sub-window is complete: it replaces the oldest, and the floor is the minimum of those kept.
    this.minima[this.head] = this.current;
    this.head = (this.head + 1) % SUB_WINDOWS;
    this.filled = Math.min(SUB_WINDOWS, this.filled + 1);
    this.current = Infinity;
    this.inCurrent = 0;
    let m = Infinity;
    for (let i = 0; i < this.filled; i++) if (this.minima[i]! < m) m = this.minima[i]!;
    this.floor = m;
  }

  /** The floor's RMS (16-bit scale); 0 before any frame. */
  get floorRms(): number {
    return Number.isFinite(this.floor) ? this.floor : 0;
  }

  /** The floor in dBFS (−∞ for digital silence). */
  get floorDbfs(): number {
    return rmsToDbfs(this.floorRms);
  }

  /** Audio under this RMS is silence: `SPEECH_OVER_FLOOR_DB` over the floor, at least `SILENCE_RMS`. */
  get gateRms(): number {
    const over = this.floorRms * this.factor;
    return over > SILENCE_RMS ? over : SILENCE_RMS;
  }
}

/** dBFS of a 16-bit RMS (full scale: a square wave at 32767… a sine at full scale is −3 dBFS). */
export function rmsToDbfs(rms: number): number {
  return 20 * Math.log10(rms / 32768);
}

/** The 16-bit RMS of a level in dBFS (0 for −∞). */
export function dbfsToRms(db: number): number {
  return 32768 * 10 ** (db / 20);
}

/** The `p`th percentile (0–100) of levels, the nearest rank below; sorts `xs` in place. */
export function percentile(xs: number[], p: number): number {
  const s = xs.sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
