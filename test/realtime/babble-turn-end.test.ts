import { describe, expect, it } from 'vitest';
import { SileroVad } from '../../shared/engines/vad/silero.ts';
import { addNoise, noiseRmsFor, noiseSource, type NoiseType } from '../../shared/kernel/audio/noise.ts';
import { mulawToPcm, pcmToMulaw } from '../../shared/kernel/audio/mulaw.ts';
import { int16ToPcm, pcmToInt16, rms16 } from '../../shared/kernel/audio/pcm.ts';
import { trimSilence } from '../../shared/kernel/audio/trim-silence.ts';
import { speechRms } from '../../shared/domains/agent-tests/impairments.ts';
import { StageHarness } from '../../workers/realtime/pipeline/harness.ts';
import { VadStage } from '../../workers/realtime/pipeline/input/vad-stage.ts';
import { BackgroundGate } from '../../workers/realtime/pipeline/input/background-gate.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';

const RATE = 8000;
const CHUNK = RATE / 50;
const VAD_FRAME = 256; // Silero at 8 kHz
const ENDPOINT_MS = 300;

/** Four other people talking at once behind the caller: flite voices reading other sentences (babble's voices). */
async function crowd(): Promise<Int16Array[]> {
  const lines: Array<[string, string]> = [
    ['kal', 'The weather on the coast will stay cloudy with rain spreading from the west by the evening'],
    ['awb', 'Please remember to bring the forms with you when you come in to sign the papers next week'],
    ['slt', 'We have been waiting for the train for almost an hour and nobody has told us anything yet'],
    ['kal', 'The shop on the corner closes early on Sundays so you should go there on Saturday instead'],
  ];
  return Promise.all(lines.map(async ([voice, t]) => pcmToInt16(await fliteUtterance(t, RATE, voice))));
}

/**
 * A caller's sentence on a phone line (μ-law) carrying `noise` `snrDb` under the caller's voice, 3 s of the line
 * before (the agent speaking: the line alone) and 3.5 s after. The VAD stage's speech starts and ends (audio ms),
 * and where the caller's last word ends.
 */
async function callerTurn(noise: { type: NoiseType; snrDb: number; seed: number } | null) {
  const said = pcmToInt16(
    trimSilence(await fliteUtterance('I would like to change the address on my account', RATE, 'rms')),
  );
  const lead = 3 * RATE;
  const x = new Int16Array(lead + said.length + 3.5 * RATE);
  x.set(said, lead);
  if (noise) {
    const voices = noise.type === 'babble' ? await crowd() : undefined;
    const src = noiseSource({ type: noise.type, rate: RATE, seed: noise.seed, voices });
    addNoise(x, src, noiseRmsFor(speechRms(int16ToPcm(said)), noise.snrDb));
  }
  const vad = new VadStage(new SileroVad().atRate(RATE)!, RATE, {
    threshold: 0.5,
    startMs: 60,
    endpointMs: ENDPOINT_MS,
  });
  const h = new StageHarness(vad);
  const scored = () => h.out.filter((f) => f.kind === 'vad-frame').length;
  for (let off = 0; off < x.length; off += 4 * CHUNK) {
    for (let c = off; c < Math.min(x.length, off + 4 * CHUNK); c += CHUNK) {
      const pcm = mulawToPcm(pcmToMulaw(int16ToPcm(x.slice(c, c + CHUNK))));
      h.push({ kind: 'audio-in', pcm, sampleRate: RATE, atMs: (c / RATE) * 1000 });
    }
    await h.until(() => scored() >= Math.floor(Math.min(x.length, off + 4 * CHUNK) / VAD_FRAME), 20_000);
  }
  return {
    starts: h.out.flatMap((f) => (f.kind === 'speech-start' ? [f.atMs] : [])),
    ends: h.out.flatMap((f) => (f.kind === 'speech-end' ? [f.atMs] : [])),
    onsetMs: (lead / RATE) * 1000,
    lastWordMs: ((lead + said.length) / RATE) * 1000,
  };
}

describe('background voices: the caller’s turn ends over a crowd', () => {
  // Before the background gate (background-gate.ts) the crowd held the VAD in speech from the call's first second to
  // its end: one run of "speech" through the caller's turn, never ended (bench:robustness, babble 10–20 dB: 4–43 of
  // 50 turns still open 3 s after the last word; here 10 dB seed 1 and every 5 dB seed). The crowd is not the caller.
  for (const snrDb of [10, 5])
    for (const seed of [1, 2, 3])
      it(`babble ${snrDb} dB, seed ${seed}: the turn ends within 1.5 s of the last word, and not before it`, async () => {
        const r = await callerTurn({ type: 'babble', snrDb, seed });
        const ended = r.ends.filter((at) => at > r.onsetMs);
        expect(ended.length).toBeGreaterThan(0);
        const turnEnd = ended[0]!;
        // Not cut in the middle of the sentence (its words have no pause near the 300 ms window).
        expect(turnEnd).toBeGreaterThan(r.lastWordMs);
        expect(turnEnd - r.lastWordMs).toBeLessThan(1500);
      });

  it('a clean line: one turn, ended 300 ms (and a frame or two) after the last word', async () => {
    const r = await callerTurn(null);
    expect(r.starts).toHaveLength(1);
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]! - r.lastWordMs).toBeGreaterThanOrEqual(ENDPOINT_MS - 64);
    expect(r.ends[0]! - r.lastWordMs).toBeLessThan(ENDPOINT_MS + 100);
  });
});

describe('BackgroundGate', () => {
  /**
   * Feeds a line's 32 ms frames, the VAD "in speech" from `speechFromMs` on (a crowd or a talker the model hears
   * throughout); returns the gate after each frame.
   */
  function gates(x: Int16Array, speechFromMs = 0): number[] {
    const gate = new BackgroundGate();
    const out: number[] = [];
    for (let off = 0; off + VAD_FRAME <= x.length; off += VAD_FRAME) {
      gate.push(rms16(x.subarray(off, off + VAD_FRAME)), (off / RATE) * 1000 >= speechFromMs);
      out.push(gate.gateDb);
    }
    return out;
  }

  // A long turn on a line without voices is the caller's, not the line's background: were it taken for the line's
  // voices, a louder sentence after it would stand over "the crowd" and the caller's normal level would be gated.
  it('a caller who speaks up after a quiet sentence on a clean line is not judged against their own voice', async () => {
    const quiet = pcmToInt16(
      await fliteUtterance('Well I am not really sure what the number was but it was on the letter', RATE, 'rms'),
    );
    const loud = pcmToInt16(await fliteUtterance('I would like to change the address on my account', RATE, 'rms'));
    const x = new Int16Array(2 * RATE + quiet.length + loud.length);
    x.set(
      quiet.map((v) => Math.round(v / 4)),
      2 * RATE,
    ); // 12 dB quieter
    x.set(loud, 2 * RATE + quiet.length);
    expect(gates(x, 2000).some(Number.isFinite)).toBe(false);
  });

  it('steady noise with a talker on it never engages: the floor is the only gate', async () => {
    const said = pcmToInt16(await fliteUtterance('I would like to change the address on my account', RATE, 'rms'));
    for (const type of ['white', 'hum'] as const) {
      const x = new Int16Array(3 * RATE + said.length);
      x.set(said, 3 * RATE);
      addNoise(x, noiseSource({ type, rate: RATE, seed: 7 }), noiseRmsFor(speechRms(int16ToPcm(said)), 15));
      expect({ type, engaged: gates(x, 3000).some(Number.isFinite) }).toEqual({ type, engaged: false });
    }
  });

  it('a crowd alone never engages; a talker 15 dB over it does, at the crowd’s loud moments', async () => {
    const said = pcmToInt16(await fliteUtterance('I would like to change the address on my account', RATE, 'rms'));
    const crowdOnly = new Int16Array(6 * RATE);
    const rms = noiseRmsFor(speechRms(int16ToPcm(said)), 15);
    addNoise(crowdOnly, noiseSource({ type: 'babble', rate: RATE, seed: 4, voices: await crowd() }), rms);
    expect(gates(crowdOnly).some(Number.isFinite)).toBe(false);

    const x = new Int16Array(3 * RATE + said.length);
    x.set(said, 3 * RATE);
    addNoise(x, noiseSource({ type: 'babble', rate: RATE, seed: 4, voices: await crowd() }), rms);
    const g = gates(x);
    const firstOn = g.findIndex(Number.isFinite);
    // Engaged during the caller's sentence (not in the 3 s of crowd before it)…
    expect(firstOn * 32).toBeGreaterThan(3000);
    // …at a level under the caller's voice and over the crowd's typical level.
    const crowdDb = 20 * Math.log10(rms / 32768);
    const callerDb = 20 * Math.log10(speechRms(int16ToPcm(said)) / 32768);
    expect(g[firstOn]!).toBeGreaterThan(crowdDb);
    expect(g[firstOn]!).toBeLessThan(callerDb);
  });
});
