import type { InputProcessor } from './input-processor.ts';

/** The corner frequency when the agent sets none: under the voice's lowest fundamentals, over mains hum. */
export const DEFAULT_HIGHPASS_HZ = 100;

/**
 * `highpass`: a first-order high-pass filter (one zero at DC, one pole at p = e^(−2π·fc/rate)),
 * y[n] = g·(x[n] − x[n−1]) + p·y[n−1], with g = (1 + p)/2 so that the top of the band passes at unit gain.
 * Removes a DC offset and attenuates mains hum (50 Hz at a 100 Hz corner: to 45 % amplitude, a fifth of its
 * energy) that a VAD may score as speech, and leaves the speech band as it was (1 kHz at 8 kHz: 99.5 %). The
 * filter's state carries over from chunk to chunk, so chunk boundaries add nothing.
 */
export class HighPassFilter implements InputProcessor {
  readonly name = 'highpass';
  private readonly pole: number;
  private readonly gain: number;
  private prevIn = 0;
  private prevOut = 0;

  constructor(rate: number, cutoffHz = DEFAULT_HIGHPASS_HZ) {
    this.pole = Math.exp((-2 * Math.PI * cutoffHz) / rate);
    this.gain = (1 + this.pole) / 2;
  }

  process(samples: Int16Array): Int16Array {
    const out = new Int16Array(samples.length);
    let { prevIn, prevOut } = this;
    for (let i = 0; i < samples.length; i++) {
      const x = samples[i]!;
      prevOut = this.gain * (x - prevIn) + this.pole * prevOut;
      prevIn = x;
      out[i] = Math.max(-32768, Math.min(32767, Math.round(prevOut)));
    }
    this.prevIn = prevIn;
    this.prevOut = prevOut;
    return out;
  }
}
