import { mulberry32 } from '../../kernel/prng.ts';
import type { Impairments } from '../../kernel/contracts/agent-tests.ts';

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

export function lineImpairment(imp: Impairments, speechLevelRms: number, codec: MulawCodec): LineImpairment {
  const rand = mulberry32(imp.seed);
  // Uniform noise in [-a, a] has RMS a/√3.
  const noiseRms = imp.noiseSnrDb === undefined ? 0 : speechLevelRms / 10 ** (imp.noiseSnrDb / 20);
  const amp = noiseRms * Math.sqrt(3);
  const loss = (imp.packetLossPct ?? 0) / 100;
  const jitter = imp.jitterMs ?? 0;
  let lost = 0;
  return {
    get lost() {
      return lost;
    },
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
      if (drop) lost++;
      return { frame: drop ? null : frame, delayMs };
    },
  };
}
