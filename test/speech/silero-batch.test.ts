import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { pcmToInt16 } from '../../shared/kernel/audio/pcm.ts';
import { SileroVad, sileroModelPath } from '../../shared/engines/vad/silero.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';

/**
 * Silero scores the frames of concurrent calls in one batched model run (silero.ts, SileroBatcher). Each call's
 * probabilities must be exactly those of its frames run one at a time, as the model was run before batching: the
 * reference below is that one-frame-per-run loop, on its own onnxruntime session of the same model.
 */
async function oneAtATime(frames: Int16Array[], rate: 8000 | 16000): Promise<number[]> {
  const session = await ort.InferenceSession.create(sileroModelPath(), {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const ctx = rate === 8000 ? 32 : 64;
  let state = new Float32Array(256);
  let context = new Float32Array(ctx);
  const probs: number[] = [];
  for (const frame of frames) {
    const input = new Float32Array(ctx + frame.length);
    input.set(context);
    for (let i = 0; i < frame.length; i++) input[ctx + i] = frame[i]! / 32768;
    const out = await session.run({
      input: new ort.Tensor('float32', input, [1, input.length]),
      state: new ort.Tensor('float32', state, [2, 1, 128]),
      sr: new ort.Tensor('int64', BigInt64Array.from([BigInt(rate)]), []),
    });
    state = new Float32Array((out.stateN as ort.Tensor).data as Float32Array);
    context = input.slice(input.length - ctx);
    probs.push(((out.output as ort.Tensor).data as Float32Array)[0]!);
  }
  await session.release();
  return probs;
}

/** Speech, silence and noise in a different order and level per stream, cut into VAD frames. */
function streams(speech: Int16Array[], count: number, frameSamples: number): Int16Array[][] {
  return Array.from({ length: count }, (_, c) => {
    const parts: Int16Array[] = [];
    let seed = c + 1;
    const noise = (n: number, level: number) =>
      Int16Array.from({ length: n }, () => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return Math.round(((seed / 0x7fffffff) * 2 - 1) * level);
      });
    parts.push(noise(frameSamples * (c % 5), 30 * c));
    for (let k = 0; k < speech.length; k++) {
      const s = speech[(k + c) % speech.length]!;
      parts.push(Int16Array.from(s, (v) => Math.max(-32768, Math.min(32767, Math.round(v * (0.3 + (c % 4) * 0.3))))));
      parts.push(noise(frameSamples * (3 + ((c + k) % 7)), 200));
    }
    const all = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
    let off = 0;
    for (const p of parts) {
      all.set(p, off);
      off += p.length;
    }
    const frames: Int16Array[] = [];
    for (let o = 0; o + frameSamples <= all.length; o += frameSamples) frames.push(all.slice(o, o + frameSamples));
    return frames;
  });
}

describe('Silero VAD, batched across calls', () => {
  it.each([
    [8000, 40], // more calls than one run takes (32): two runs a round
    [16000, 5],
  ] as const)(
    'gives every call exactly the probabilities of its frames run one at a time (%i Hz)',
    async (rate, n) => {
      const texts = ['hello, I would like to book a table', 'wait, I only need Saturday', 'five five five zero one'];
      const speech = await Promise.all(texts.map(async (t) => pcmToInt16(await fliteUtterance(t, rate))));
      const vad = new SileroVad(undefined, rate);
      const calls = streams(speech, n, vad.frameSamples);
      const expected = await Promise.all(calls.map((frames) => oneAtATime(frames, rate)));
      const before = vad.runs;

      // All calls push their next frame at once, as concurrent calls do: the frames share model runs.
      const sessions = calls.map(() => vad.session());
      const got: number[][] = calls.map(() => []);
      const longest = Math.max(...calls.map((f) => f.length));
      for (let i = 0; i < longest; i++) {
        const round = calls.map((frames, c) => (i < frames.length ? sessions[c]!.push(frames[i]!) : null));
        (await Promise.all(round)).forEach((p, c) => p !== null && got[c]!.push(p));
      }
      expect(got).toEqual(expected);
      // The frames did share runs: most rounds scored every call's frame in one run.
      const after = vad.runs;
      expect((after.frames - before.frames) / (after.runs - before.runs)).toBeGreaterThan(Math.min(n, 32) / 2);
      // The calls heard speech (the comparison covers high probabilities, not only silence).
      expect(expected.flat().filter((p) => p > 0.5).length).toBeGreaterThan(10 * n);
    },
    60_000,
  );

  it('keeps each call in order when one call queues several frames and others one', async () => {
    const vad = new SileroVad().atRate(8000)!;
    const speech = pcmToInt16(await fliteUtterance('I would like to come in this week', 8000));
    const [a, b] = streams([speech], 2, vad.frameSamples);
    const [ea, eb] = await Promise.all([oneAtATime(a!, 8000), oneAtATime(b!, 8000)]);
    const sa = vad.session();
    const sb = vad.session();
    // Call a's frames are all queued up front (a lagging call); b pushes one frame at a time.
    const pa = Promise.all(a!.map((f) => sa.push(f)));
    const gb: number[] = [];
    for (const f of b!) gb.push(await sb.push(f));
    expect(await pa).toEqual(ea);
    expect(gb).toEqual(eb);
  }, 60_000);
});
