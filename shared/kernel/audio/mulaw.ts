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
  // Every caller frame is decoded here: through an Int16 view (the platform runs on little-endian hosts; Buffer's
  // pool keeps allocations 8-byte aligned) rather than a bounds-checked writeInt16LE per sample.
  if (out.byteOffset % 2 === 0) {
    const s = new Int16Array(out.buffer, out.byteOffset, mulaw.length);
    for (let i = 0; i < mulaw.length; i++) s[i] = DECODE[mulaw[i]!]!;
    return out;
  }
  for (let i = 0; i < mulaw.length; i++) out.writeInt16LE(DECODE[mulaw[i]!]!, i * 2);
  return out;
}

/** Base64 alphabet → 6-bit value; -1 for any other character. */
const B64 = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries())
  B64[c.charCodeAt(0)] = i;
const PAD = '='.charCodeAt(0);

/**
 * A Twilio media payload (base64 of μ-law bytes) → PCM s16le in one pass, or null when it is not plain base64 (the
 * alphabet, then at most two `=`; the caller reports the frame as invalid). The same bytes as Buffer.from(payload,
 * 'base64') then mulawToPcm, without a separate validation pass. Caller frames of the plain shape Twilio sends are
 * decoded from the socket's bytes (mulawBase64BytesToPcm); this is the general path's.
 */
export function mulawBase64ToPcm(payload: string): Buffer | null {
  // UTF-8 keeps ASCII as it is and turns any other character into bytes of 0x80 and over, which the decoder refuses
  // as it refuses the character: the same answer for every string.
  const bytes = Buffer.from(payload, 'utf8');
  return mulawBase64BytesToPcm(bytes, 0, bytes.length);
}

/**
 * mulawBase64ToPcm over the ASCII bytes `src[start, end)` of a message, so a media frame's payload is decoded
 * straight from the socket's buffer without first becoming a string (the string form goes through it).
 */
export function mulawBase64BytesToPcm(src: Uint8Array, start: number, end: number): Buffer | null {
  let n = end;
  let pad = 0;
  while (pad < 2 && n > start && src[n - 1] === PAD) {
    n--;
    pad++;
  }
  const bytes = Math.floor(((n - start) * 6) / 8);
  const out = Buffer.allocUnsafe(bytes * 2);
  const aligned = out.byteOffset % 2 === 0;
  const s = aligned ? new Int16Array(out.buffer, out.byteOffset, bytes) : null;
  let acc = 0;
  let bits = 0;
  let k = 0;
  for (let i = start; i < n; i++) {
    const c = src[i]!;
    const v = c < 128 ? B64[c]! : -1;
    if (v < 0) return null;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      const sample = DECODE[(acc >> bits) & 0xff]!;
      if (s) s[k] = sample;
      else out.writeInt16LE(sample, k * 2);
      k++;
    }
  }
  return out;
}

/** PCM s16le → μ-law bytes (an odd trailing byte is ignored). */
export function pcmToMulaw(pcm: Buffer): Buffer {
  const n = pcm.length >> 1;
  const out = Buffer.allocUnsafe(n);
  if (pcm.byteOffset % 2 === 0) {
    const s = new Int16Array(pcm.buffer, pcm.byteOffset, n);
    for (let i = 0; i < n; i++) out[i] = encodeSample(s[i]!);
    return out;
  }
  for (let i = 0; i < n; i++) out[i] = encodeSample(pcm.readInt16LE(i * 2));
  return out;
}

/** μ-law silence (digital zero). */
export const MULAW_SILENCE = 0xff;
