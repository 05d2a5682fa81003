import { ApiError } from '../errors/api-error.ts';

/** Size written into a streamed WAV header whose length is not known yet (readers take "to end of stream"). */
export const WAV_UNKNOWN_SIZE = 0xffffffff;

export interface WavFormat {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
}

export interface ParsedWav extends WavFormat {
  /** WAVE format tag: 1 = PCM, 3 = IEEE float, 6 = A-law, 7 = μ-law, 0xfffe = extensible. */
  formatTag: number;
  /** The sample bytes of the data chunk (a view into the input, not a copy). */
  data: Buffer;
}

/**
 * A 44-byte canonical RIFF/WAVE header for PCM. Without `dataBytes` (a stream whose length is unknown) both size
 * fields hold 0xFFFFFFFF, which ffmpeg, browsers and `parseWav` read as "until the end of the stream".
 */
export function wavHeader(format: Partial<WavFormat> & { sampleRate: number }, dataBytes?: number): Buffer {
  const channels = format.channels ?? 1;
  const bits = format.bitsPerSample ?? 16;
  const blockAlign = (channels * bits) / 8;
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(dataBytes === undefined ? WAV_UNKNOWN_SIZE : Math.min(WAV_UNKNOWN_SIZE, 36 + dataBytes), 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(format.sampleRate, 24);
  h.writeUInt32LE(format.sampleRate * blockAlign, 28);
  h.writeUInt16LE(blockAlign, 32);
  h.writeUInt16LE(bits, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes === undefined ? WAV_UNKNOWN_SIZE : Math.min(WAV_UNKNOWN_SIZE, dataBytes), 40);
  return h;
}

/** A complete WAV file of mono (or interleaved) s16le PCM. */
export function encodeWav(pcm: Buffer, sampleRate: number, channels = 1): Buffer {
  return Buffer.concat([wavHeader({ sampleRate, channels, bitsPerSample: 16 }, pcm.length), pcm]);
}

/** True when the buffer starts like a RIFF/WAVE file. */
export function isWav(buf: Buffer): boolean {
  return buf.length >= 12 && buf.toString('ascii', 0, 4) === 'RIFF' && buf.toString('ascii', 8, 12) === 'WAVE';
}

/**
 * Parses a RIFF/WAVE file: walks the chunks (LIST, fact… are skipped), reads `fmt `, returns the `data` chunk.
 * A data size beyond the buffer (streamed headers, 0xFFFFFFFF or espeak's 0x7FFFF000) means "to the end".
 * Throws `invalid_audio` on anything that is not a readable WAV.
 */
export function parseWav(buf: Buffer): ParsedWav {
  if (!isWav(buf)) throw new ApiError('invalid_audio', { detail: 'not a RIFF/WAVE file' }, 'file');
  let off = 12;
  let fmt: Omit<ParsedWav, 'data'> | null = null;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > buf.length) break;
      let formatTag = buf.readUInt16LE(body);
      if (formatTag === 0xfffe && size >= 40 && body + 26 <= buf.length) formatTag = buf.readUInt16LE(body + 24);
      fmt = {
        formatTag,
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        bitsPerSample: buf.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!fmt) break;
      if (fmt.channels < 1 || fmt.sampleRate < 1 || fmt.bitsPerSample < 8) break;
      const end = Math.min(buf.length, body + size);
      const frame = (fmt.channels * fmt.bitsPerSample) / 8;
      const usable = end - body - ((end - body) % frame);
      return { ...fmt, data: buf.subarray(body, body + usable) };
    }
    off = body + size + (size % 2);
  }
  throw new ApiError('invalid_audio', { detail: 'the WAV file has no readable fmt/data chunks' }, 'file');
}
