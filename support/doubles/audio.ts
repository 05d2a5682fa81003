/** Test audio: a tone as mono s16le PCM, WAV framing, and splitting into stream chunks. */

export function tone(sampleRate: number, seconds: number, freq = 440, amplitude = 8000): Buffer {
  const n = Math.round(sampleRate * seconds);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++)
    out.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * freq * i) / sampleRate)), i * 2);
  return out;
}

export function silence(sampleRate: number, seconds: number): Buffer {
  return Buffer.alloc(Math.round(sampleRate * seconds) * 2);
}

/** A WAV header; `streaming` writes the 0xFFFFFFFF size placeholders streamed WAV uses. */
export function wavHeader(sampleRate: number, dataBytes: number, streaming = false, channels = 1): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(streaming ? 0xffffffff : 36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 2 * channels, 28);
  h.writeUInt16LE(2 * channels, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(streaming ? 0xffffffff : dataBytes, 40);
  return h;
}

export function wav(pcm: Buffer, sampleRate: number): Buffer {
  return Buffer.concat([wavHeader(sampleRate, pcm.length), pcm]);
}

/** Splits into `n` chunks; odd sizes on purpose so clients must re-align samples. */
export function split(buf: Buffer, n = 6): Buffer[] {
  const size = Math.ceil(buf.length / n) | 1;
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

/** Reads a mono s16le WAV back into its sample rate and PCM (doubles of STT vendors decode uploads). */
export function parseWav(buf: Buffer): { sampleRate: number; pcm: Buffer } {
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV');
  let pos = 12;
  let sampleRate = 0;
  while (pos + 8 <= buf.length) {
    const id = buf.toString('ascii', pos, pos + 4);
    const size = buf.readUInt32LE(pos + 4);
    if (id === 'fmt ') sampleRate = buf.readUInt32LE(pos + 12);
    if (id === 'data') return { sampleRate, pcm: buf.subarray(pos + 8, pos + 8 + size) };
    pos += 8 + size + (size % 2);
  }
  throw new Error('WAV without data');
}
