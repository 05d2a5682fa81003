import { clip16, int16ToPcm, pcmToInt16 } from './pcm.ts';

export interface ResamplerOptions {
  /** Zero crossings of the sinc on each side at the lower of the two rates; more = steeper filter, more delay. */
  zeroCrossings?: number;
  /** Cut-off as a fraction of the lower Nyquist frequency (0.9 puts 8 kHz audio's cut-off at 3.6 kHz). */
  cutoff?: number;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Kaiser window; I0 by its series. */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < 1e-12 * sum) break;
  }
  return sum;
}

/**
 * Streaming polyphase resampler for mono Int16 PCM: a Kaiser-windowed sinc low-pass (cut-off just below the lower
 * Nyquist frequency, so downsampling does not alias and upsampling does not image) evaluated at the L/M rational
 * positions. The filter state (the last input samples) is kept between `process` calls, so feeding 20 ms chunks
 * gives the same output as feeding the whole signal at once. `flush` drains the filter's look-ahead at the end.
 *
 * Delay: `halfWidth` input samples of look-ahead (e.g. 16 samples = 2 ms at 8 kHz); the output timeline is aligned
 * with the input (output sample n sits at input time n·M/L), the tail arrives on `flush`.
 */
export class Resampler {
  readonly inRate: number;
  readonly outRate: number;
  private readonly L: number;
  private readonly M: number;
  private readonly halfWidth: number;
  private readonly taps: number;
  /** table[phase * taps + k]: weight of input sample (i - halfWidth + 1 + k) for output phase `phase`. */
  private readonly table: Float64Array;
  /**
   * For a whole-number decimation (one phase, e.g. the local voices' 16 kHz to a phone line's 8 kHz), the weights
   * from the centre out: folded[j] weighs the two samples j either side of the centre, which the filter weighs alike.
   * Null for every other ratio.
   */
  private readonly folded: Float64Array | null;
  /** Unconsumed input, starting at absolute input index `bufStart`. */
  private buf: Float64Array;
  private bufLen = 0;
  private bufStart: number;
  private received = 0;
  private nextOut = 0;
  private flushed = false;

  constructor(inRate: number, outRate: number, opts: ResamplerOptions = {}) {
    if (!Number.isInteger(inRate) || !Number.isInteger(outRate) || inRate <= 0 || outRate <= 0) {
      throw new RangeError(`sample rates must be positive integers (got ${inRate} → ${outRate})`);
    }
    this.inRate = inRate;
    this.outRate = outRate;
    const g = gcd(inRate, outRate);
    this.L = outRate / g;
    this.M = inRate / g;
    if (this.L > 8192) throw new RangeError(`rate ratio ${outRate}/${inRate} needs too many filter phases`);
    const scale = Math.min(1, this.L / this.M); // cut-off relative to the input Nyquist frequency
    const cutoff = (opts.cutoff ?? 0.92) * scale;
    const zc = opts.zeroCrossings ?? 16;
    this.halfWidth = Math.ceil(zc / scale);
    this.taps = 2 * this.halfWidth;
    const beta = 8.6;
    const i0b = besselI0(beta);
    const table = new Float32Array(this.L * this.taps);
    for (let phase = 0; phase < this.L; phase++) {
      const frac = phase / this.L; // output sits `frac` input samples after input index i
      let sum = 0;
      for (let k = 0; k < this.taps; k++) {
        const t = k - this.halfWidth + 1 - frac; // distance of tap k from the output position, in input samples
        const x = t / this.halfWidth;
        const w = Math.abs(x) >= 1 ? 0 : besselI0(beta * Math.sqrt(1 - x * x)) / i0b;
        const s = t === 0 ? 1 : Math.sin(Math.PI * cutoff * t) / (Math.PI * cutoff * t);
        const v = cutoff * s * w;
        table[phase * this.taps + k] = v;
        sum += v;
      }
      // Normalise each phase to unity DC gain so a constant input stays constant.
      for (let k = 0; k < this.taps; k++) table[phase * this.taps + k]! /= sum;
    }
    // The weights are rounded to float32 as they always were, then held as float64: the products and sums are the
    // same doubles, without a float32 → float64 conversion per tap in the per-sample loop.
    this.table = Float64Array.from(table);
    this.folded = this.L === 1 ? foldSymmetric(this.table, this.halfWidth) : null;
    // History of halfWidth zeros before the first sample, so output 0 is centred on input 0.
    this.buf = new Float64Array(Math.max(4096, this.taps * 4));
    this.bufLen = this.halfWidth;
    this.bufStart = -this.halfWidth;
  }

  /** True when the rates are equal (process returns its input unchanged). */
  get passthrough(): boolean {
    return this.inRate === this.outRate;
  }

  /** Feeds a chunk; returns the output samples that are now complete. */
  process(input: Int16Array): Int16Array {
    if (this.flushed) throw new Error('Resampler.process after flush');
    if (this.passthrough) return input;
    this.append(input);
    this.received += input.length;
    return this.drain();
  }

  /** Feeds s16le bytes; returns s16le bytes. */
  processPcm(pcm: Buffer): Buffer {
    return int16ToPcm(this.process(pcmToInt16(pcm)));
  }

  /** Ends the stream: returns the remaining output, as if the input were followed by silence. */
  flush(): Int16Array {
    if (this.flushed || this.passthrough) return new Int16Array(0);
    this.flushed = true;
    this.append(new Int16Array(this.halfWidth + 1));
    return this.drain(Math.ceil((this.received * this.L) / this.M));
  }

  flushPcm(): Buffer {
    return int16ToPcm(this.flush());
  }

  private append(input: Int16Array): void {
    if (this.bufLen + input.length > this.buf.length) {
      const next = new Float64Array(Math.max(this.buf.length * 2, this.bufLen + input.length));
      next.set(this.buf.subarray(0, this.bufLen));
      this.buf = next;
    }
    for (let i = 0; i < input.length; i++) this.buf[this.bufLen + i] = input[i]!;
    this.bufLen += input.length;
  }

  /** Emits every output whose filter window lies inside the buffered input, up to `limit` outputs in total. */
  private drain(limit = Infinity): Int16Array {
    if (this.folded) return this.drainDecimating(this.folded, limit);
    const { L, M, taps, halfWidth, table } = this;
    const bufEnd = this.bufStart + this.bufLen; // absolute index one past the last buffered sample
    // Outputs whose window fits in the buffer: n·M/L − halfWidth + 1 + taps ≤ bufEnd. Sized up front (this runs per
    // 20 ms frame of every call: no growing array, no boxed numbers).
    const fits = Math.floor(((bufEnd - taps + halfWidth - 1) * L) / M) + 1 - this.nextOut;
    const out = new Int16Array(Math.max(0, Math.min(fits + 1, limit - this.nextOut)));
    const buf = this.buf;
    let count = 0;
    for (; count < out.length; count++) {
      const n = this.nextOut;
      const pos = n * M;
      const i = Math.floor(pos / L);
      const first = i - halfWidth + 1;
      if (first + taps > bufEnd) break;
      const base = (pos - i * L) * taps;
      const off = first - this.bufStart;
      let acc = 0;
      let k = 0;
      // Four taps a step, added in the same order as one at a time (the same rounding, so the same samples).
      for (; k + 4 <= taps; k += 4) {
        acc += buf[off + k]! * table[base + k]!;
        acc += buf[off + k + 1]! * table[base + k + 1]!;
        acc += buf[off + k + 2]! * table[base + k + 2]!;
        acc += buf[off + k + 3]! * table[base + k + 3]!;
      }
      for (; k < taps; k++) acc += buf[off + k]! * table[base + k]!;
      out[count] = clip16(Math.round(acc));
      this.nextOut++;
    }
    this.dropConsumed();
    return count === out.length ? out : out.subarray(0, count);
  }

  /**
   * `drain` for one phase (L = 1): output n is centred on input n·M, and the two samples j either side of it are
   * added before their one multiply — half the multiplies of the general loop. This ran on every sentence of the
   * local voices on phone calls (12 % of the platform's CPU at 50 calls, benchmarks/voice-latency/README.md).
   */
  private drainDecimating(folded: Float64Array, limit: number): Int16Array {
    const { M, halfWidth } = this;
    const bufEnd = this.bufStart + this.bufLen;
    // Output n needs inputs up to n·M + halfWidth (the last tap, whose weight is zero, is never read).
    const fits = Math.floor((bufEnd - halfWidth - 1) / M) + 1 - this.nextOut;
    const out = new Int16Array(Math.max(0, Math.min(fits, limit - this.nextOut)));
    const buf = this.buf;
    const reach = halfWidth - 1;
    for (let count = 0; count < out.length; count++) {
      const c = this.nextOut * M - this.bufStart;
      let acc = buf[c]! * folded[0]!;
      for (let j = 1; j <= reach; j++) acc += (buf[c - j]! + buf[c + j]!) * folded[j]!;
      out[count] = clip16(Math.round(acc));
      this.nextOut++;
    }
    this.dropConsumed();
    return out;
  }

  /** Drops input no longer needed by the next output's window. */
  private dropConsumed(): void {
    const nextFirst = Math.floor((this.nextOut * this.M) / this.L) - this.halfWidth + 1;
    const drop = Math.max(0, Math.min(this.bufLen, nextFirst - this.bufStart));
    if (drop > 0) {
      this.buf.copyWithin(0, drop, this.bufLen);
      this.bufLen -= drop;
      this.bufStart += drop;
    }
  }
}

/**
 * The one phase's weights folded about its centre (tap halfWidth − 1), or null when they are not mirror images
 * (they are, by construction: the window and the sinc are even) or the outer tap is not zero.
 */
function foldSymmetric(table: Float64Array, halfWidth: number): Float64Array | null {
  const centre = halfWidth - 1;
  if (table[2 * halfWidth - 1] !== 0) return null;
  const folded = new Float64Array(halfWidth);
  folded[0] = table[centre]!;
  for (let j = 1; j < halfWidth; j++) {
    if (table[centre - j] !== table[centre + j]) return null;
    folded[j] = table[centre + j]!;
  }
  return folded;
}

/** One-shot resampling of a whole mono s16le buffer. */
export function resamplePcm(pcm: Buffer, inRate: number, outRate: number): Buffer {
  if (inRate === outRate) return pcm;
  const r = new Resampler(inRate, outRate);
  const a = r.process(pcmToInt16(pcm));
  const b = r.flush();
  const out = new Int16Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return int16ToPcm(out);
}

/** Resamples a stream of mono s16le chunks, keeping filter state across chunks. */
export async function* resampleStream(
  chunks: AsyncIterable<Buffer>,
  inRate: number,
  outRate: number,
): AsyncGenerator<Buffer> {
  if (inRate === outRate) {
    yield* chunks;
    return;
  }
  const r = new Resampler(inRate, outRate);
  for await (const c of chunks) {
    const out = r.processPcm(c);
    if (out.length) yield out;
  }
  const tail = r.flushPcm();
  if (tail.length) yield tail;
}
