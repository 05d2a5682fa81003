import { addNoise, noiseRmsFor, noiseSource, type NoiseSource } from '../../kernel/audio/noise.ts';
import { NoiseFloor, rmsToDbfs } from '../../kernel/audio/noise-floor.ts';
import { pcmToInt16, rms16 } from '../../kernel/audio/pcm.ts';
import { mulberry32 } from '../../kernel/prng.ts';
import type { Impairments } from '../../contracts/agent-tests.ts';

/**
 * Seeded line impairments on the caller's 20 ms μ-law media frames, as a bad phone line would do them: background
 * noise at an SNR under the caller's speech, frames that never arrive, and frames held back by a random delay (so
 * they arrive unevenly, sometimes out of order). One PRNG drives all three in frame order, so the same seed gives
 * the same line every run.
 */
export interface FrameFate {
  /** The frame to send (noise added), or null when it is lost. */
  frame: Buffer | null;
  /** Hold it back this long before sending. */
  delayMs: number;
}

export interface LineImpairment {
  apply(mulaw: Buffer): FrameFate;
  /** Frames lost so far (reported with the result). */
  readonly lost: number;
  /** The noise floor of the line as sent (dBFS, tracked as the platform's VAD tracks it); −∞ for a silent line. */
  readonly floorDbfs: number;
  /** The RMS of the noise the line adds (the frames' 16-bit scale; 0 for none): the simulated STT hears speech over it. */
  readonly noiseRms: number;
}

export interface MulawCodec {
  mulawToPcm(mu: Buffer): Buffer;
  pcmToMulaw(pcm: Buffer): Buffer;
}

/** RMS of s16le PCM over its voiced samples (|x| above a floor), so pauses do not lower the speech level. */
export function speechRms(pcm: Buffer): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i + 1 < pcm.length; i += 2) {
    const x = pcm.readInt16LE(i);
    if (Math.abs(x) < 100) continue;
    s += x * x;
    n++;
  }
  return n ? Math.sqrt(s / n) : 0;
}

/**
 * The scenario's line. `voices`: speech at the line's rate to mix babble from (the scenario's caller lines). The
 * legacy `noiseSnrDb` keeps drawing its white noise from the line's one PRNG (its scenarios repeat exactly); a
 * `noise` of a kind comes from its own seeded source (shared/kernel/audio/noise.ts, as the robustness benchmark's),
 * so it never shifts which frames are lost.
 */
export function lineImpairment(
  imp: Impairments,
  speechLevelRms: number,
  codec: MulawCodec,
  voices: readonly Int16Array[] = [],
  rate = 8000,
): LineImpairment {
  const rand = mulberry32(imp.seed);
  // Uniform noise in [-a, a] has RMS a/√3.
  const noiseRms = imp.noiseSnrDb === undefined ? 0 : speechLevelRms / 10 ** (imp.noiseSnrDb / 20);
  const amp = noiseRms * Math.sqrt(3);
  const kind: NoiseSource | null = imp.noise
    ? noiseSource({ type: imp.noise.type, rate, seed: imp.seed ^ 0x5eed, voices })
    : null;
  const kindRms = imp.noise ? noiseRmsFor(speechLevelRms, imp.noise.snrDb) : 0;
  const floor = new NoiseFloor(20);
  const loss = (imp.packetLossPct ?? 0) / 100;
  const jitter = imp.jitterMs ?? 0;
  let lost = 0;
  return {
    get lost() {
      return lost;
    },
    get floorDbfs() {
      return rmsToDbfs(floor.floorRms);
    },
    noiseRms: noiseRms + kindRms,
    apply(mulaw) {
      // Draw the loss and delay first, always, so the noise never shifts which frames are lost.
      const drop = rand() < loss;
      const delayMs = jitter ? Math.round(rand() * jitter) : 0;
      let frame = mulaw;
      if (amp > 0) {
        const pcm = codec.mulawToPcm(mulaw);
        for (let i = 0; i + 1 < pcm.length; i += 2) {
          const v = pcm.readInt16LE(i) + Math.round((rand() * 2 - 1) * amp);
          pcm.writeInt16LE(Math.max(-32768, Math.min(32767, v)), i);
        }
        frame = codec.pcmToMulaw(pcm);
      }
      if (kind) {
        const pcm = codec.mulawToPcm(frame);
        const samples = addNoise(pcmToInt16(Buffer.from(pcm)), kind, kindRms);
        frame = codec.pcmToMulaw(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
      }
      floor.push(rms16(pcmToInt16(codec.mulawToPcm(frame))));
      if (drop) lost++;
      return { frame: drop ? null : frame, delayMs };
    },
  };
}

/** Samples under this magnitude are silence, not voice (as speechRms counts them). */
const VOICED = 100;

/**
 * The caller's handset overdriven (impairments.clipPct): the voice is amplified by `gain` and flattened at `peak`,
 * its loudest sample's level, so `pct` % of its voiced samples sit at ±peak. Found from all of a scenario's caller
 * speech, so one handset clips every turn alike (a quiet turn less than a loud one).
 */
export interface Clip {
  gain: number;
  peak: number;
}

/** The clip that flattens `pct` % of the voiced samples of `pcms` (s16le); null when nothing would be clipped. */
export function clipFor(pcms: Buffer[], pct: number): Clip | null {
  // A histogram of magnitudes: the level that pct % of voiced samples exceed, exactly and in one pass.
  const counts = new Uint32Array(32769);
  let voiced = 0;
  let peak = 0;
  for (const pcm of pcms)
    for (let i = 0; i + 1 < pcm.length; i += 2) {
      const a = Math.abs(pcm.readInt16LE(i));
      if (a < VOICED) continue;
      counts[a]!++;
      voiced++;
      if (a > peak) peak = a;
    }
  const over = Math.floor((voiced * pct) / 100);
  if (pct <= 0 || over === 0) return null;
  let above = 0;
  let level = peak;
  // Walk down from the peak until `over` samples lie above the level.
  while (level > VOICED && above + counts[level]! <= over) above += counts[level--]!;
  return level >= peak ? null : { gain: peak / level, peak };
}

/** `pcm` through the overdriven handset: amplified by the clip's gain, flattened at ±peak. Deterministic. */
export function hardClip(pcm: Buffer, clip: Clip): Buffer {
  const out = Buffer.alloc(pcm.length & ~1);
  for (let i = 0; i + 1 < out.length; i += 2) {
    const v = Math.round(pcm.readInt16LE(i) * clip.gain);
    out.writeInt16LE(Math.max(-clip.peak, Math.min(clip.peak, v)), i);
  }
  return out;
}
