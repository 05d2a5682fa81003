/**
 * G.711 μ-law (PROTOCOLS.md). Encode: sign from bit 15, magnitude clipped to 32635, bias 0x84, exponent from the
 * highest set bit above bit 7, 4-bit mantissa, byte = ~(sign | exp<<4 | mantissa). Decode is a 256-entry table:
 * invert, ((mantissa<<3) + 0x84) << exp) − 0x84, apply sign. 0xFF and 0x7F → 0, 0x80 → +32124, 0x00 → −32124.
 */
const BIAS = 0x84;
const CLIP = 32635;

const DECODE = new Int16Array(256);
for (let i = 0; i < 256; i++) {
  const u = ~i & 0xff;
  const sign = u & 0x80;
  const exp = (u >> 4) & 0x07;
  const mantissa = u & 0x0f;
  const magnitude = (((mantissa << 3) + BIAS) << exp) - BIAS;
  DECODE[i] = sign ? -magnitude : magnitude;
}

/** Exponent by (biased magnitude >> 7): the position of the highest set bit above bit 7. */
const EXP = new Uint8Array(256);
for (let i = 1; i < 256; i++) EXP[i] = 31 - Math.clz32(i);

export function encodeSample(sample: number): number {
  let s = sample | 0;
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  if (s > CLIP) s = CLIP;
  s += BIAS;
  const exp = EXP[(s >> 7) & 0xff]!;
  const mantissa = (s >> (exp + 3)) & 0x0f;
  return ~(sign | (exp << 4) | mantissa) & 0xff;
}

export function decodeSample(byte: number): number {
  return DECODE[byte & 0xff]!;
}

/** μ-law bytes → PCM s16le. */
export function mulawToPcm(mulaw: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(mulaw.length * 2);
  for (let i = 0; i < mulaw.length; i++) out.writeInt16LE(DECODE[mulaw[i]!]!, i * 2);
  return out;
}

/** PCM s16le → μ-law bytes (an odd trailing byte is ignored). */
export function pcmToMulaw(pcm: Buffer): Buffer {
  const n = pcm.length >> 1;
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = encodeSample(pcm.readInt16LE(i * 2));
  return out;
}

/** μ-law silence (digital zero). */
export const MULAW_SILENCE = 0xff;
