import { describe, expect, it } from 'vitest';
import { addNoise, noiseRmsFor, noiseSource } from '../../shared/kernel/audio/noise.ts';
import { pcmToInt16 } from '../../shared/kernel/audio/pcm.ts';
import { speechRms } from '../../shared/domains/agent-tests/impairments.ts';
import { AudioSettings } from '../../shared/contracts/turn-seams.ts';
import { inputProcessors } from '../../workers/realtime/pipeline/input/input-registry.ts';
import type { InputProcessor } from '../../workers/realtime/pipeline/input/input-processor.ts';
import { PassthroughProcessor } from '../../workers/realtime/pipeline/input/passthrough.ts';
import { InputStage } from '../../workers/realtime/pipeline/input/input-stage.ts';
import { StageHarness } from '../../workers/realtime/pipeline/harness.ts';
import { RnnoiseSuppressor } from '../../workers/realtime/pipeline/input/rnnoise.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';

const RATE = 8000;
const CHUNK = RATE / 50;

/** A second of line noise, the caller's sentence, a second of line noise: the noise at `snrDb` under the voice. */
async function noisyLine(snrDb: number, seed = 7) {
  const pcm = await fliteUtterance('Could you tell me your opening hours on Saturday? I would like to come by.');
  const speech = pcmToInt16(pcm);
  const x = new Int16Array(RATE + speech.length + RATE);
  x.set(speech, RATE);
  addNoise(x, noiseSource({ type: 'pink', rate: RATE, seed }), noiseRmsFor(speechRms(pcm), snrDb));
  return { x, speechFrom: RATE, speechTo: RATE + speech.length };
}

function run(p: InputProcessor, x: Int16Array, chunk = CHUNK): Int16Array {
  const out = new Int16Array(x.length);
  for (let off = 0; off < x.length; off += chunk) out.set(p.process(x.subarray(off, off + chunk)), off);
  return out;
}

const power = (x: Int16Array, from: number, to: number) => {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i]! * x[i]!;
  return s / (to - from);
};

/**
 * The line's SNR as a listener measures it: the power of the speech stretch less the noise's (from the noise-only
 * stretches around it), over the noise's. `delay` samples: the processor's.
 */
function snrDb(x: Int16Array, line: { speechFrom: number; speechTo: number }, delay = 0): number {
  const margin = RATE / 10;
  const noise =
    (power(x, margin + delay, line.speechFrom - margin + delay) +
      power(x, line.speechTo + 3 * margin + delay, x.length - margin)) /
    2;
  const both = power(x, line.speechFrom + delay, line.speechTo + delay);
  return 10 * Math.log10(Math.max(1e-9, both - noise) / noise);
}

describe('input seam: rnnoise', () => {
  it('raises the SNR of real speech under pink noise at 5 dB by more than 6 dB (passthrough: by nothing)', async () => {
    const line = await noisyLine(5);
    const before = snrDb(line.x, line);
    expect(before).toBeGreaterThan(2);
    expect(before).toBeLessThan(8);
    const plain = snrDb(run(new PassthroughProcessor(), line.x), line);
    expect(Math.abs(plain - before)).toBeLessThan(0.01);
    const p = new RnnoiseSuppressor(RATE);
    const denoised = run(p, line.x);
    const after = snrDb(denoised, line, Math.round((p.delayMs * RATE) / 1000));
    expect(after - before).toBeGreaterThan(6);
    // The voice itself survives: the speech stretch keeps most of its energy (the noise goes, the words stay).
    const delay = Math.round((p.delayMs * RATE) / 1000);
    const speechOut = power(denoised, line.speechFrom + delay, line.speechTo + delay);
    const speechIn = power(line.x, line.speechFrom, line.speechTo) * (1 - 10 ** (-before / 10));
    expect(speechOut / speechIn).toBeGreaterThan(0.3);
    p.close();
  });

  it('every chunk comes out as long as it went in, and chunk sizes change nothing (a fixed delay, no gaps)', async () => {
    const { x } = await noisyLine(15, 3);
    const by20 = run(new RnnoiseSuppressor(RATE), x, CHUNK);
    const by10 = run(new RnnoiseSuppressor(RATE), x, CHUNK / 2);
    const by60 = run(new RnnoiseSuppressor(RATE), x, CHUNK * 3);
    expect(Array.from(by10)).toEqual(Array.from(by20));
    expect(Array.from(by60)).toEqual(Array.from(by20));
    // The delay is silence, then the audio: nothing before it, something right after.
    const p = new RnnoiseSuppressor(RATE);
    const delay = Math.round((p.delayMs * RATE) / 1000);
    expect(p.delayMs).toBeLessThanOrEqual(20);
    const first = run(p, x.subarray(0, RATE));
    expect(first.subarray(0, delay).every((v) => v === 0)).toBe(true);
    expect(power(first, delay, RATE)).toBeGreaterThan(0);
  });

  it('works at the direct protocol rate (16 kHz) too, and refuses audio after its state is freed', async () => {
    const pcm = await fliteUtterance('Hello there, this is a test of the line.', 16000);
    // A line with some hiss (a clean one bypasses the model: below).
    const x = addNoise(pcmToInt16(pcm), noiseSource({ type: 'white', rate: 16000, seed: 2 }), 100);
    const p = new RnnoiseSuppressor(16000);
    const out = run(p, x, 320);
    expect(out.length).toBe(pcm.length / 2);
    expect(p.frames).toBeGreaterThan(0);
    expect(p.meanVoiceProbability).toBeGreaterThan(0.2);
    p.close();
    p.close(); // twice is harmless
    expect(() => p.process(new Int16Array(320))).toThrow(/after close/);
  });

  it('a clean line (digital silence between words) bypasses the model: the audio as it came, the same delay', async () => {
    const speech = pcmToInt16(await fliteUtterance('Could you tell me your opening hours on Saturday?'));
    const x = new Int16Array(RATE + speech.length + RATE);
    x.set(speech, RATE);
    const p = new RnnoiseSuppressor(RATE);
    const delay = Math.round((p.delayMs * RATE) / 1000);
    const out = run(p, x);
    expect(p.frames).toBe(0);
    expect(p.bypassedChunks).toBe(Math.ceil(x.length / CHUNK));
    expect(Array.from(out.subarray(delay))).toEqual(Array.from(x.subarray(0, x.length - delay)));
    expect(out.subarray(0, delay).every((v) => v === 0)).toBe(true);
    p.close();
  });

  it('the model takes over when the line turns noisy, and hands back when it is clean again, the delay unchanged', async () => {
    const { x } = await noisyLine(15, 5);
    const silence = new Int16Array(RATE);
    const line = new Int16Array(silence.length + x.length + 2 * RATE);
    line.set(x, silence.length);
    const p = new RnnoiseSuppressor(RATE);
    const delay = Math.round((p.delayMs * RATE) / 1000);
    const out = run(p, line);
    expect(out.length).toBe(line.length);
    // Noise for seconds: once the silence before it has aged out of the floor's window (3 s), the model runs on it
    // and takes it down (the line's last second of noise)…
    expect(p.frames).toBeGreaterThan(0);
    const end = silence.length + x.length;
    const noiseIn = power(line, end - RATE + RATE / 10, end - RATE / 10);
    const noiseOut = power(out, end - RATE + RATE / 10 + delay, end - RATE / 10 + delay);
    expect(10 * Math.log10(noiseOut / noiseIn)).toBeLessThan(-3);
    // …and the digital silence after it went through untouched, at the same delay.
    const tail = line.length - RATE;
    expect(Array.from(out.subarray(tail + delay))).toEqual(Array.from(line.subarray(tail, line.length - delay)));
    expect(p.bypassedChunks).toBeGreaterThan(0);
    p.close();
  });

  it("the input stage frees the call's denoiser state when the call ends", () => {
    const p = new RnnoiseSuppressor(RATE);
    const h = new StageHarness(new InputStage([p]));
    h.push({ kind: 'audio-in', pcm: Buffer.alloc(CHUNK * 2), sampleRate: RATE, atMs: 0 });
    expect(() => p.process(new Int16Array(CHUNK))).not.toThrow();
    h.push({ kind: 'end', reason: 'caller-hangup' });
    expect(() => p.process(new Int16Array(CHUNK))).toThrow(/after close/);
  });

  it('an agent names it like any other processor', () => {
    const audio = AudioSettings.parse({ inputProcessors: [{ name: 'highpass' }, { name: 'rnnoise' }] });
    expect(inputProcessors({ inRate: RATE }, audio.inputProcessors).map((p) => p.name)).toEqual([
      'highpass',
      'rnnoise',
    ]);
    expect(AudioSettings.safeParse({ inputProcessors: [{ name: 'rnnoise', level: 3 }] }).success).toBe(false);
  });
});
