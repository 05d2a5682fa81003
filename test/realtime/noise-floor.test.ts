import { describe, expect, it } from 'vitest';
import { SileroVad } from '../../shared/engines/vad/silero.ts';
import type { VadEngine, VadSession } from '../../shared/engines/vad/types.ts';
import { addNoise, noiseRmsFor, noiseSource, type NoiseType } from '../../shared/kernel/audio/noise.ts';
import { NoiseFloor, rmsToDbfs, SPEECH_OVER_FLOOR_DB } from '../../shared/kernel/audio/noise-floor.ts';
import { int16ToPcm, pcmToInt16, SILENCE_RMS } from '../../shared/kernel/audio/pcm.ts';
import { speechRms } from '../../shared/domains/agent-tests/impairments.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { StageHarness } from '../../workers/realtime/pipeline/harness.ts';
import { VadStage } from '../../workers/realtime/pipeline/input/vad-stage.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';

const RATE = 8000;
const CHUNK = RATE / 50;
const VAD_FRAME = 256; // Silero at 8 kHz

/**
 * The caller's side of a call on the real Silero VAD: `leadS` seconds of the line alone (the agent greeting), the
 * caller's sentence, `tailS` of the line alone; the line's noise `snrDb` under the voice (none: a clean line).
 * Fed in 20 ms chunks, a few at a time, so the VAD scores every frame (no load shedding).
 */
async function vadEvents(noise: { type: NoiseType; snrDb: number } | null, leadS = 2, tailS = 2) {
  const pcm = await fliteUtterance('Could you tell me your opening hours on Saturday?');
  const speech = pcmToInt16(pcm);
  const x = new Int16Array(Math.round(leadS * RATE) + speech.length + Math.round(tailS * RATE));
  x.set(speech, Math.round(leadS * RATE));
  if (noise)
    addNoise(x, noiseSource({ type: noise.type, rate: RATE, seed: 11 }), noiseRmsFor(speechRms(pcm), noise.snrDb));
  // The real model, counted: how many frames it was asked to score during the line alone.
  const silero = new SileroVad().atRate(RATE)!;
  let modelFrames = 0;
  const counted: VadEngine = {
    label: silero.label,
    sampleRate: silero.sampleRate,
    frameSamples: silero.frameSamples,
    session() {
      const s = silero.session();
      return {
        push: (frame: Int16Array) => {
          if (scored() * VAD_FRAME < leadS * RATE) modelFrames++;
          return s.push(frame);
        },
      } as VadSession;
    },
  };
  const vad = new VadStage(counted, RATE, { threshold: 0.5, startMs: 60, endpointMs: 300 });
  const h = new StageHarness(vad);
  const scored = () => h.out.filter((f) => f.kind === 'vad-frame').length;
  for (let off = 0; off < x.length; off += 4 * CHUNK) {
    for (let c = off; c < Math.min(x.length, off + 4 * CHUNK); c += CHUNK)
      h.push({ kind: 'audio-in', pcm: int16ToPcm(x.slice(c, c + CHUNK)), sampleRate: RATE, atMs: (c / RATE) * 1000 });
    const want = Math.floor(Math.min(x.length, off + 4 * CHUNK) / VAD_FRAME);
    await h.until(() => scored() >= want, 20_000);
  }
  const events = h.out.filter((f: Frame) => f.kind === 'speech-start' || f.kind === 'speech-end');
  const onsetMs = leadS * 1000;
  const endMs = onsetMs + (speech.length / RATE) * 1000;
  const leadFrames = Math.floor((leadS * RATE) / VAD_FRAME);
  return { events, onsetMs, endMs, floor: vad.floor, modelShareOfLead: modelFrames / leadFrames };
}

describe('noise floor: the tracker', () => {
  it('follows a line of steady noise within a few dB, and a clean line keeps the absolute gate', () => {
    const f = new NoiseFloor(20);
    expect(f.gateRms).toBe(SILENCE_RMS);
    const src = noiseSource({ type: 'white', rate: RATE, seed: 1 });
    const chunk = new Int16Array(CHUNK);
    for (let i = 0; i < 200; i++) {
      chunk.fill(0);
      addNoise(chunk, src, 300);
      f.push(Math.sqrt(chunk.reduce((s, v) => s + v * v, 0) / CHUNK));
    }
    expect(f.floorRms).toBeGreaterThan(300 * 0.8);
    expect(f.floorRms).toBeLessThan(300);
    expect(f.gateRms).toBeCloseTo(f.floorRms * 10 ** (SPEECH_OVER_FLOOR_DB / 20), 6);
    expect(f.floorDbfs).toBeCloseTo(rmsToDbfs(f.floorRms), 6);
    const clean = new NoiseFloor(20);
    for (let i = 0; i < 200; i++) clean.push(i % 10 < 5 ? 0 : 3000); // digital silence between words
    expect(clean.gateRms).toBe(SILENCE_RMS);
  });

  it('falls at once, rises only when the quiet stretch ages out, and speech with gaps does not lift it', () => {
    const f = new NoiseFloor(20);
    for (let i = 0; i < 50; i++) f.push(1000);
    expect(f.floorRms).toBe(1000);
    f.push(200);
    expect(f.floorRms).toBe(200);
    // Three seconds of speech (loud, with a quiet gap every half second) keep the floor near the gaps.
    for (let i = 0; i < 150; i++) f.push(i % 25 === 0 ? 220 : 4000);
    expect(f.floorRms).toBeLessThanOrEqual(220);
    // The line gets louder for good: after the window the floor follows it.
    for (let i = 0; i < 200; i++) f.push(1500);
    expect(f.floorRms).toBe(1500);
  });
});

describe('noise floor: the VAD on a noisy line', () => {
  it('a clean line: one turn, from the speech onset to its end (as before)', async () => {
    const { events, onsetMs, endMs } = await vadEvents(null);
    expect(events.map((e) => e.kind)).toEqual(['speech-start', 'speech-end']);
    expect((events[0] as { atMs: number }).atMs).toBeGreaterThan(onsetMs - 100);
    expect((events[1] as { atMs: number }).atMs).toBeLessThan(endMs + 800);
  });

  for (const [type, snrDb, steady] of [
    ['white', 20, true],
    ['white', 10, true],
    ['pink', 15, false],
    ['pink', 10, false],
    ['hum', 10, true],
    ['crackle', 15, false],
    ['crackle', 10, false],
    ['music', 15, false],
    ['music', 10, false],
  ] as const)
    it(`${type} noise ${snrDb} dB under the voice: one turn, taken; steady noise is not scored by the model`, async () => {
      const { events, onsetMs, endMs, floor, modelShareOfLead } = await vadEvents({ type, snrDb });
      const starts = events.filter((e) => e.kind === 'speech-start') as { atMs: number }[];
      const ends = events.filter((e) => e.kind === 'speech-end') as { atMs: number }[];
      expect(starts.length).toBeGreaterThanOrEqual(1);
      // Nothing during the line alone (the agent's greeting would be cut), and the sentence is heard…
      expect(starts[0]!.atMs).toBeGreaterThan(onsetMs - 100);
      expect(starts[0]!.atMs).toBeLessThan(endMs);
      // …and ends: the noise after it is not speech, so the caller's turn is taken.
      expect(ends.length).toBe(starts.length);
      expect(ends.at(-1)!.atMs).toBeLessThan(endMs + 900);
      expect(starts.length).toBe(1);
      // Steady noise sits at its floor: the model (most of a call's CPU) is spared it. The old absolute gate
      // (−56 dBFS) sent every frame of a noisy line to the model.
      if (steady) expect(modelShareOfLead).toBeLessThan(0.5);
      // The floor the gate follows is the line's noise, not the old absolute −56 dBFS.
      expect(floor.floorDbfs).toBeGreaterThan(-50);
    });
});
