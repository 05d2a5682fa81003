import { speechRms } from '../../shared/domains/agent-tests/impairments.ts';
import { mulawToPcm, pcmToMulaw } from '../../shared/kernel/audio/mulaw.ts';
import { addNoise, noiseRmsFor, noiseSource, type NoiseType } from '../../shared/kernel/audio/noise.ts';
import { int16ToPcm } from '../../shared/kernel/audio/pcm.ts';
import { mulberry32 } from '../../shared/kernel/prng.ts';
import type { Utterance } from './corpus.ts';

export const RATE = 8000;
export const FRAME = 160; // 20 ms: one phone-line packet

/**
 * One benchmark call as the platform receives it: the agent speaking (the caller silent: the line alone), the caller's
 * turn, the agent again; seeded line noise of a kind at an SNR under the caller's voice, μ-law, and packet loss (a
 * lost 20 ms frame never arrives, as on the agent-test line). Landmarks are in the time of the frames that arrive.
 */
export interface Call {
  /** The 20 ms frames that arrive (PCM s16le, μ-law decoded). */
  frames: Buffer[];
  /** The caller's turn: its recording's first sample and its last voiced sample, ms in arrived-frame time. */
  onsetMs: number;
  endMs: number;
  /** Its first voiced sample (a recording's lead-in is not speech): where a caller's barge-in begins. */
  voicedMs: number;
  /**
   * Where the caller's recording is voiced (10 ms steps within 20 dB of its speech level, joined over gaps under
   * 100 ms), [from, to) ms in arrived-frame time: where a streaming STT would time the words (stt-timeline.ts).
   */
  voiced: Array<[number, number]>;
  /** The agent's two utterances (the caller silent): [from, to) ms. */
  agent: Array<[number, number]>;
  lossPct: number;
}

export interface LineSpec {
  type: NoiseType | null;
  snrDb: number;
  seed: number;
  /** Babble's voices (other utterances than the caller's). */
  voices: readonly Int16Array[];
}

/** Where the caller's voiced speech ends: the last 10 ms over a tenth of its speech level. */
function lastVoicedSample(x: Int16Array): number {
  const level = speechRms(int16ToPcm(x)) / 10;
  for (let end = x.length; end > 80; end -= 80) {
    let s = 0;
    for (let i = end - 80; i < end; i++) s += x[i]! * x[i]!;
    if (Math.sqrt(s / 80) >= level) return end;
  }
  return x.length;
}

/** The caller's voiced stretches (samples): 10 ms steps over a tenth of its speech level, joined over gaps < `joinMs`. */
export function voicedStretches(x: Int16Array, rate: number, joinMs: number): Array<[number, number]> {
  const level = speechRms(int16ToPcm(x)) / 10;
  const step = rate / 100;
  const out: Array<[number, number]> = [];
  for (let start = 0; start + step <= x.length; start += step) {
    let s = 0;
    for (let i = start; i < start + step; i++) s += x[i]! * x[i]!;
    if (Math.sqrt(s / step) < level) continue;
    const last = out.at(-1);
    if (last && start - last[1] < (joinMs * rate) / 1000) last[1] = start + step;
    else out.push([start, start + step]);
  }
  return out;
}

/** Where the caller's voiced speech begins: the first 10 ms over a tenth of its speech level. */
function firstVoicedSample(x: Int16Array): number {
  const level = speechRms(int16ToPcm(x)) / 10;
  for (let start = 0; start + 80 <= x.length; start += 80) {
    let s = 0;
    for (let i = start; i < start + 80; i++) s += x[i]! * x[i]!;
    if (Math.sqrt(s / 80) >= level) return start;
  }
  return 0;
}

export function makeCall(u: Utterance, line: LineSpec): Call {
  const rnd = mulberry32(line.seed);
  const agentA = Math.round((3 + rnd() * 1.5) * RATE);
  const agentB = 3 * RATE;
  // The agent's reply starts 0.6 s after the caller's last word (turn taken, reply synthesized).
  const replyGap = Math.round(0.6 * RATE);
  const total = agentA + u.samples.length + replyGap + agentB;
  const x = new Int16Array(Math.ceil(total / FRAME) * FRAME);
  x.set(u.samples, agentA);
  if (line.type) {
    const src = noiseSource({ type: line.type, rate: RATE, seed: line.seed, voices: line.voices });
    addNoise(x, src, noiseRmsFor(speechRms(int16ToPcm(u.samples)), line.snrDb));
  }
  const lossPct = rnd() * 3;
  const frames: Buffer[] = [];
  /** Arrived-frame time (ms) of each sent frame's start. */
  const arrivedMs: number[] = [];
  for (let off = 0; off < x.length; off += FRAME) {
    arrivedMs.push(frames.length * 20);
    if (rnd() < lossPct / 100) continue;
    frames.push(mulawToPcm(pcmToMulaw(int16ToPcm(x.subarray(off, off + FRAME)))));
  }
  const at = (sample: number) => arrivedMs[Math.min(arrivedMs.length - 1, Math.floor(sample / FRAME))]!;
  const onset = agentA;
  const end = agentA + lastVoicedSample(u.samples);
  return {
    frames,
    onsetMs: at(onset),
    endMs: at(end),
    voicedMs: at(onset + firstVoicedSample(u.samples)),
    voiced: voicedStretches(u.samples, RATE, 100).map(([a, b]) => [at(onset + a), at(onset + b - 1) + 20]),
    agent: [
      [0, at(onset)],
      [at(end + replyGap), frames.length * 20],
    ],
    lossPct,
  };
}

/**
 * The caller's turn on a direct (16 kHz PCM) line, for the local STT: a second of the line, the utterance, half a
 * second of the line; the same kind of noise at the same SNR, no μ-law, no loss. Returns the samples and where the
 * utterance starts and ends in them.
 */
export function directTurn(u: Utterance, line: LineSpec & { voices16: readonly Int16Array[] }): Int16Array {
  const rate = 16000;
  const x = new Int16Array(rate + u.samples16.length + rate / 2);
  x.set(u.samples16, rate);
  if (line.type) {
    const src = noiseSource({ type: line.type, rate, seed: line.seed, voices: line.voices16 });
    addNoise(x, src, noiseRmsFor(speechRms(int16ToPcm(u.samples16)), line.snrDb));
  }
  return x;
}

/** Samples of arrived frames from `fromMs` to `toMs` (for the STT). */
export function slice(frames: Buffer[], fromMs: number, toMs: number): Buffer {
  const a = Math.max(0, Math.floor(fromMs / 20));
  const b = Math.min(frames.length, Math.ceil(toMs / 20));
  return Buffer.concat(frames.slice(a, b));
}
