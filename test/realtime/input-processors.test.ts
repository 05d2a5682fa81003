import { describe, expect, it } from 'vitest';
import { int16ToPcm, pcmToInt16 } from '../../shared/kernel/audio/pcm.ts';
import { AudioSettings, INPUT_PROCESSORS } from '../../shared/contracts/turn-seams.ts';
import type { AgentRow } from '../../shared/domains/agents/db.ts';
import { agentAtVersion } from '../../shared/domains/agents/versions.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { StageHarness } from '../../workers/realtime/pipeline/harness.ts';
import { HighPassFilter } from '../../workers/realtime/pipeline/input/highpass.ts';
import { INPUT_PROCESSOR_REGISTRY, inputProcessors } from '../../workers/realtime/pipeline/input/input-registry.ts';
import { InputStage } from '../../workers/realtime/pipeline/input/input-stage.ts';
import { fliteUtterance, rms } from '../../support/realtime/helpers.ts';

const RATE = 8000;

/** `seconds` of a sine at `hz` (amplitude `amp`), plus `dc`. */
function tone(hz: number, amp: number, seconds: number, dc = 0): Int16Array {
  const n = Math.round(seconds * RATE);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(dc + amp * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

const mix = (...parts: Int16Array[]) => parts[0]!.map((_, i) => parts.reduce((s, p) => s + p[i]!, 0));

/** The amplitude of the `hz` component of `x` (a single-bin DFT over whole periods). */
function amplitudeAt(x: Int16Array, hz: number): number {
  let re = 0;
  let im = 0;
  for (let i = 0; i < x.length; i++) {
    re += x[i]! * Math.cos((2 * Math.PI * hz * i) / RATE);
    im += x[i]! * Math.sin((2 * Math.PI * hz * i) / RATE);
  }
  return (2 * Math.hypot(re, im)) / x.length;
}

const mean = (x: Int16Array) => x.reduce((s, v) => s + v, 0) / x.length;

/** Runs `x` through the processor in 20 ms chunks, as a call's audio arrives; drops the first `settleS` seconds. */
function inChunks(p: { process(s: Int16Array): Int16Array }, x: Int16Array, settleS = 0.2): Int16Array {
  const out = new Int16Array(x.length);
  for (let off = 0; off < x.length; off += RATE / 50) out.set(p.process(x.subarray(off, off + RATE / 50)), off);
  return out.subarray(Math.round(settleS * RATE));
}

describe('input seam: highpass', () => {
  it('takes a 50 Hz hum down and leaves a 1 kHz speech-band tone as it was', () => {
    const signal = mix(tone(50, 4000, 1.2), tone(1000, 4000, 1.2));
    const out = inChunks(new HighPassFilter(RATE), signal);
    const humBefore = amplitudeAt(signal.subarray(0.2 * RATE), 50);
    const humAfter = amplitudeAt(out, 50);
    const toneAfter = amplitudeAt(out, 1000);
    expect(humBefore).toBeCloseTo(4000, -2);
    // First order at 100 Hz: 50 Hz to under half its amplitude (a fifth of its energy), 1 kHz within 1 %.
    expect(humAfter / humBefore).toBeLessThan(0.5);
    expect((humAfter / humBefore) ** 2).toBeLessThan(0.25);
    expect(toneAfter / 4000).toBeGreaterThan(0.99);
  });

  it('removes a DC offset, and chunk boundaries change nothing', () => {
    const offset = tone(1000, 2000, 1, 3000);
    expect(mean(offset)).toBeCloseTo(3000, 0);
    expect(Math.abs(mean(inChunks(new HighPassFilter(RATE), offset, 0.5)))).toBeLessThan(30);
    const whole = new HighPassFilter(RATE).process(offset);
    expect(Array.from(inChunks(new HighPassFilter(RATE), offset, 0))).toEqual(Array.from(whole));
  });

  it('keeps the voice: flite speech comes out with nearly all its energy', async () => {
    const speech = await fliteUtterance('Could you tell me your opening hours on Saturday?');
    const out = int16ToPcm(inChunks(new HighPassFilter(RATE), pcmToInt16(speech), 0));
    expect(rms(out) / rms(speech)).toBeGreaterThan(0.85);
  });

  it('a higher corner takes more of a low tone', () => {
    const low = tone(150, 4000, 1);
    const at100 = amplitudeAt(inChunks(new HighPassFilter(RATE), low), 150);
    const at300 = amplitudeAt(inChunks(new HighPassFilter(RATE, 300), low), 150);
    expect(at300).toBeLessThan(at100 * 0.7);
  });
});

describe('input seam: the registry and the stage', () => {
  it('has one implementation for every name in the contract', () => {
    expect(Object.keys(INPUT_PROCESSOR_REGISTRY).sort()).toEqual(Object.keys(INPUT_PROCESSORS).sort());
    expect(inputProcessors({ inRate: RATE })).toEqual([]);
    expect(
      inputProcessors({ inRate: RATE }, [{ name: 'passthrough' }, { name: 'highpass' }]).map((p) => p.name),
    ).toEqual(['passthrough', 'highpass']);
  });

  it('refuses an unknown processor or a corner out of range in the contract, naming the known ones', () => {
    const unknown = AudioSettings.safeParse({ inputProcessors: [{ name: 'denoise' }] });
    expect(unknown.error!.issues[0]!.message).toBe(
      'audio.inputProcessors: name must be one of passthrough, highpass, rnnoise',
    );
    expect(AudioSettings.safeParse({ inputProcessors: [{ name: 'highpass', cutoffHz: 5 }] }).success).toBe(false);
  });

  it('the stage filters caller audio frames in order, same length, and passes every other frame', () => {
    const h = new StageHarness(new InputStage(inputProcessors({ inRate: RATE }, [{ name: 'highpass' }])));
    const hum = tone(50, 4000, 1, 2000);
    const frames: Frame[] = [];
    for (let off = 0; off < hum.length; off += RATE / 50) {
      const pcm = Buffer.from(int16ToPcm(hum.slice(off, off + RATE / 50)));
      frames.push({ kind: 'audio-in', pcm, sampleRate: RATE, atMs: (off / RATE) * 1000 });
    }
    h.push(...frames.slice(0, 25), { kind: 'dtmf', digit: '5', atMs: 500 }, ...frames.slice(25));
    expect(h.kinds().filter((k) => k !== 'audio-in')).toEqual(['dtmf']);
    const audio = h.out.flatMap((f) => (f.kind === 'audio-in' ? [f] : []));
    expect(audio.map((f) => f.atMs)).toEqual(frames.map((f) => (f.kind === 'audio-in' ? f.atMs : -1)));
    expect(audio.every((f) => f.pcm.length === (RATE / 50) * 2)).toBe(true);
    const out = Buffer.concat(audio.slice(10).map((f) => f.pcm));
    expect(rms(out)).toBeLessThan(rms(int16ToPcm(hum)) * 0.5);
    // The frames the transport handed in are not changed (the recording keeps what the caller sent).
    expect(Array.from(pcmToInt16((frames[30] as { pcm: Buffer }).pcm))).toEqual(
      Array.from(hum.slice(30 * 160, 31 * 160)),
    );
  });
});

describe('input seam: agent versions', () => {
  it('a version snapshot taken before agents had audio settings runs without input processors', () => {
    const current = { id: 'a1', version: 3, audio: { inputProcessors: [{ name: 'highpass' }] } } as AgentRow;
    expect(agentAtVersion(current, { version: 1, config: {} }).audio).toBeNull();
    const v2 = { version: 2, config: { audio: { inputProcessors: [{ name: 'passthrough' as const }] } } };
    expect(agentAtVersion(current, v2).audio).toEqual(v2.config.audio);
  });
});
