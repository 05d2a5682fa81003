/**
 * PCM helpers. The platform's internal audio is mono signed 16-bit little-endian ("s16le") at a stated sample
 * rate; these convert between the byte form (what pipes and sockets carry) and typed arrays (what DSP uses).
 */

/** s16le bytes → Int16Array (copies when the buffer is not 2-byte aligned; a trailing odd byte is dropped). */
export function pcmToInt16(buf: Buffer): Int16Array {
  const n = buf.length >> 1;
  if (buf.byteOffset % 2 === 0) return new Int16Array(buf.buffer, buf.byteOffset, n);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = buf.readInt16LE(i * 2);
  return out;
}

/** Int16Array → s16le bytes (a view, no copy; the platform only runs on little-endian hosts). */
export function int16ToPcm(samples: Int16Array): Buffer {
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}

/** Int16 → float in [-1, 1). */
export function int16ToFloat32(samples: Int16Array): Float32Array {
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = samples[i]! / 32768;
  return out;
}

/** Float in [-1, 1] → Int16 with rounding and clipping. */
export function float32ToInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = clip16(Math.round(samples[i]! * 32768));
  return out;
}

export function pcmToFloat32(buf: Buffer): Float32Array {
  return int16ToFloat32(pcmToInt16(buf));
}

export function float32ToPcm(samples: Float32Array): Buffer {
  return int16ToPcm(float32ToInt16(samples));
}

/**
 * RMS under which audio is always silence without further analysis (≈ -56 dBFS): a clean phone line between words
 * carries (near-)digital silence. The least of the silence gate the VAD and the STT stage share; on a noisy line the
 * gate rises with the line's tracked floor (noise-floor.ts).
 */
export const SILENCE_RMS = 50;

/** Root mean square of 16-bit samples. */
export function rms16(x: Int16Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s / Math.max(1, x.length));
}

export function clip16(v: number): number {
  return v > 32767 ? 32767 : v < -32768 ? -32768 : v;
}

/** Seconds of audio in a mono s16le buffer. */
export function pcmDuration(bytes: number, sampleRate: number): number {
  return bytes / 2 / sampleRate;
}

/** Mixes interleaved multi-channel s16le down to mono by averaging. */
export function downmixToMono(buf: Buffer, channels: number): Buffer {
  if (channels === 1) return buf;
  const inp = pcmToInt16(buf);
  const frames = Math.floor(inp.length / channels);
  const out = new Int16Array(frames);
  for (let f = 0; f < frames; f++) {
    let s = 0;
    for (let c = 0; c < channels; c++) s += inp[f * channels + c]!;
    out[f] = Math.round(s / channels);
  }
  return int16ToPcm(out);
}

/** Gathers an async stream of byte chunks into one buffer. */
export async function collect(chunks: AsyncIterable<Buffer | Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return Buffer.concat(parts);
}

/**
 * Re-frames a byte stream into chunks whose length is a multiple of `align` bytes (2 for s16le), carrying the odd
 * remainder to the next chunk, so that no sample is split across chunks.
 */
export async function* alignChunks(chunks: AsyncIterable<Buffer>, align = 2): AsyncGenerator<Buffer> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const c of chunks) {
    const buf = rest.length ? Buffer.concat([rest, c]) : c;
    const usable = buf.length - (buf.length % align);
    rest = buf.subarray(usable);
    if (usable > 0) yield buf.subarray(0, usable);
  }
}
