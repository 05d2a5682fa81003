import createRnnoise from '@echogarden/rnnoise-wasm';
import { NoiseFloor } from '../../../../shared/kernel/audio/noise-floor.ts';
import { rms16, SILENCE_RMS } from '../../../../shared/kernel/audio/pcm.ts';
import { Resampler } from '../../../../shared/kernel/audio/resampler.ts';
import type { InputProcessor } from './input-processor.ts';

/** RNNoise's own rate and frame: 10 ms at 48 kHz. */
const MODEL_RATE = 48_000;

/**
 * One WebAssembly instance for the whole process (a 125 KB module, loaded in milliseconds when this file is first
 * imported): each call gets its own denoiser state in it (18.5 KB), freed when the call ends.
 */
const rnnoise = await createRnnoise();
const FRAME = rnnoise._rnnoise_get_frame_size();

/**
 * `rnnoise`: noise suppression by RNNoise (xiph; a small recurrent network that estimates a gain per frequency band
 * every 10 ms), compiled to WebAssembly (@echogarden/rnnoise-wasm, BSD-3). The caller's audio is resampled to the
 * model's 48 kHz, denoised frame by frame and resampled back to the line's rate; a fixed delay (`delayMs`: the
 * model's 10 ms frame plus the two resamplers' look-ahead) is added in front, so every chunk comes out as long as it
 * went in and the call's audio clock stays whole. Per 20 ms chunk it allocates only the resamplers' outputs and the
 * returned chunk: the model's frame lives in the WebAssembly heap, the queue between the two rates is one ring.
 *
 * Bypassed while the line is clean: as long as the line's tracked noise floor (noise-floor.ts, over the chunks it
 * gets) is under the platform's absolute silence gate (`SILENCE_RMS`, −56 dBFS: digital silence between words, as
 * flite callers and clean lines have), there is no noise to take down, and the chunk goes through untouched, with
 * the same fixed delay, so the call's timing does not change when the model starts or stops. The model and both
 * resamplers (17 ms of CPU per audio second here) then cost nothing. The floor falls at once to a silent chunk and
 * rises only after 3 s without one, so a noisy line keeps the model on and a clean one keeps it off.
 */
export class RnnoiseSuppressor implements InputProcessor {
  readonly name = 'rnnoise';
  /** The delay the stage adds to the caller's audio. */
  readonly delayMs: number;
  /** Frames the model scored, and its mean voice probability over them (for tests and traces). */
  frames = 0;
  private voiceSum = 0;
  private state: number;
  private readonly frameBuf: number;
  /** 48 kHz samples waiting for a whole model frame. */
  private readonly pending = new Float32Array(FRAME);
  /** One denoised model frame as 16-bit samples, for the resampler back. */
  private readonly scratch = new Int16Array(FRAME);
  private pendingLen = 0;
  /** The line's floor, and whether the model is running (false: bypassed, the line is clean). */
  private readonly floor: NoiseFloor;
  private modelOn = true;
  /** Chunks bypassed (the line at digital silence), for tests and traces. */
  bypassedChunks = 0;
  /** Denoised line-rate samples not returned yet: a ring, pre-filled with the delay's silence. */
  private readonly ring: Int16Array;
  private ringHead = 0;
  private ringLen: number;

  private up: Resampler;
  private down: Resampler;

  constructor(private readonly rate: number) {
    this.up = new Resampler(rate, MODEL_RATE);
    this.down = new Resampler(MODEL_RATE, rate);
    this.floor = new NoiseFloor(20);
    this.state = rnnoise._rnnoise_create(0);
    this.frameBuf = rnnoise._malloc(FRAME * 4);
    // Worst case before a chunk's output is complete: one model frame waiting, plus each resampler's look-ahead
    // (16 zero crossings at the lower rate = 2 ms at 8 kHz each), rounded up to whole milliseconds.
    this.delayMs = Math.ceil((FRAME / MODEL_RATE) * 1000 + 2 * (16 / Math.min(rate, MODEL_RATE)) * 1000 + 1);
    const delay = Math.round((this.delayMs * rate) / 1000);
    this.ring = new Int16Array(delay + rate); // a second of headroom for chunks of any size
    this.ringLen = delay;
  }

  /** Mean voice probability RNNoise gave the frames so far (0–1). */
  get meanVoiceProbability(): number {
    return this.frames ? this.voiceSum / this.frames : 0;
  }

  process(samples: Int16Array): Int16Array {
    if (this.state === 0) throw new Error('rnnoise: process after close');
    // The floor is tracked per 20 ms; a chunk of another size counts as one, which only changes how fast it moves.
    this.floor.push(rms16(samples));
    const clean = this.floor.floorRms < SILENCE_RMS;
    if (clean !== !this.modelOn) this.switchTo(!clean);
    if (this.modelOn) {
      const hi = this.up.process(samples);
      for (let i = 0; i < hi.length; i++) {
        this.pending[this.pendingLen++] = hi[i]!;
        if (this.pendingLen === FRAME) this.denoiseFrame();
      }
    } else {
      this.bypassedChunks++;
      for (let i = 0; i < samples.length; i++) this.enqueue(samples[i]!);
    }
    const out = new Int16Array(samples.length);
    const n = Math.min(samples.length, this.ringLen);
    // Short only if the delay were too small: the missing tail stays silent rather than shifting the clock.
    for (let i = 0; i < n; i++) out[i] = this.ring[(this.ringHead + i) % this.ring.length]!;
    this.ringHead = (this.ringHead + n) % this.ring.length;
    this.ringLen -= n;
    return out;
  }

  /** Frees the call's denoiser state (the stage calls it when the call ends). */
  close(): void {
    if (this.state === 0) return;
    rnnoise._rnnoise_destroy(this.state);
    rnnoise._free(this.frameBuf);
    this.state = 0;
  }

  private denoiseFrame(): void {
    // The heap view is read each time: the module's memory may grow (another call's state) and replace it.
    const heap = rnnoise.HEAPF32;
    const at = this.frameBuf >> 2;
    heap.set(this.pending, at);
    this.voiceSum += rnnoise._rnnoise_process_frame(this.state, this.frameBuf, this.frameBuf);
    this.frames++;
    this.pendingLen = 0;
    const frame = rnnoise.HEAPF32.subarray(at, at + FRAME);
    const lo = this.down.process(toInt16(frame, this.scratch));
    for (let i = 0; i < lo.length; i++) this.enqueue(lo[i]!);
  }

  private enqueue(v: number): void {
    if (this.ringLen === this.ring.length) return; // cannot happen with the headroom; never overwrite
    this.ring[(this.ringHead + this.ringLen) % this.ring.length] = v;
    this.ringLen++;
  }

  /**
   * Starts or stops the model. What the model side holds (a part frame, the resamplers' history) is dropped, and the
   * ring is brought back to exactly the fixed delay (silence added at its end, or its newest samples dropped): the
   * switch happens at a silent chunk or after seconds of noise, where a few milliseconds do not matter, and the
   * delay — the call's clock — never changes. A restarted model starts from fresh resamplers and its own state.
   */
  private switchTo(on: boolean): void {
    this.modelOn = on;
    this.pendingLen = 0;
    if (on) {
      this.up = new Resampler(this.rate, MODEL_RATE);
      this.down = new Resampler(MODEL_RATE, this.rate);
    }
    const delay = Math.round((this.delayMs * this.rate) / 1000);
    while (this.ringLen < delay) this.enqueue(0);
    this.ringLen = Math.min(this.ringLen, delay);
  }
}

function toInt16(x: Float32Array, out: Int16Array): Int16Array {
  for (let i = 0; i < x.length; i++) {
    const v = Math.round(x[i]!);
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
  return out;
}
