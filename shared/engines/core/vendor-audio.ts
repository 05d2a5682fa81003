import { alignChunks, decodeStream, encodeWav } from '../../kernel/audio/index.ts';
import { isApiError } from '../../kernel/errors/api-error.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';

/**
 * Audio helpers for vendor adapters: align streamed PCM on 16-bit samples, read a (possibly streamed) WAV,
 * decode compressed audio with ffmpeg, and wrap PCM in a WAV header for upload to STT vendors.
 */

type ByteSource = AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null;

function toBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** Yields the bytes of a response body as Buffers, mapping stream failures (reset, abort) to EngineError. */
export async function* bytesOf(provider: string, body: ByteSource): AsyncGenerator<Buffer> {
  if (!body) return;
  try {
    for await (const part of body as AsyncIterable<Uint8Array>) yield toBuffer(part);
  } catch (e) {
    throw EngineError.network(provider, e);
  }
}

/** Re-chunks bytes so every chunk holds whole s16le samples (an odd byte waits for its partner). */
export function alignedPcm(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  return alignChunks(source, 2);
}

/** Raw PCM s16le streamed by the vendor, as aligned chunks in the order they arrive. */
export function pcmStream(provider: string, body: ByteSource): AsyncGenerator<Buffer> {
  return alignedPcm(bytesOf(provider, body));
}

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** 1 = integer PCM, 3 = float, 0xfffe = extensible. */
  format: number;
}

/**
 * Reads a WAV header from a byte stream (sizes may be placeholders, as in streamed WAV) and returns the format
 * plus the data bytes that follow, still streaming.
 */
export async function readWav(
  provider: string,
  source: AsyncIterable<Buffer>,
): Promise<{ info: WavInfo; data: AsyncGenerator<Buffer> }> {
  const it = source[Symbol.asyncIterator]();
  let buf = Buffer.alloc(0);
  const need = async (n: number) => {
    while (buf.length < n) {
      const r = await it.next();
      if (r.done) throw new EngineError(provider, 'upstream', `${provider} sent a truncated WAV header`, true);
      buf = Buffer.concat([buf, r.value]);
    }
  };
  await need(12);
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new EngineError(provider, 'upstream', `${provider} sent audio that is not WAV`, true);
  }
  let pos = 12;
  let info: WavInfo | null = null;
  for (;;) {
    await need(pos + 8);
    const id = buf.toString('ascii', pos, pos + 4);
    const size = buf.readUInt32LE(pos + 4);
    if (id === 'data') {
      pos += 8;
      break;
    }
    await need(pos + 8 + size);
    if (id === 'fmt ') {
      info = {
        format: buf.readUInt16LE(pos + 8),
        channels: buf.readUInt16LE(pos + 10),
        sampleRate: buf.readUInt32LE(pos + 12),
        bitsPerSample: buf.readUInt16LE(pos + 22),
      };
    }
    pos += 8 + size + (size % 2);
  }
  if (!info) throw new EngineError(provider, 'upstream', `${provider} sent a WAV without a fmt chunk`, true);
  const rest = buf.subarray(pos);
  async function* data(): AsyncGenerator<Buffer> {
    let finished = false;
    try {
      if (rest.length) yield rest;
      for (;;) {
        const r = await it.next();
        if (r.done) {
          finished = true;
          return;
        }
        yield r.value;
      }
    } finally {
      // A consumer that stops early must release the source (cancel the vendor's response body).
      if (!finished) await it.return?.();
    }
  }
  return { info, data: data() };
}

/** True when WAV data is already what TtsAudio carries (mono s16le). */
export function isMonoS16(info: WavInfo): boolean {
  return info.channels === 1 && info.bitsPerSample === 16 && (info.format === 1 || info.format === 0xfffe);
}

/**
 * Decodes any container/codec ffmpeg reads (mp3, wav, ogg, …) into mono s16le at `sampleRate`, streaming, with
 * shared/kernel/audio's decoder. Audio a vendor sent that cannot be decoded is the vendor's fault: an upstream
 * EngineError, not the caller's `invalid_audio`.
 */
export async function* ffmpegDecode(
  provider: string,
  input: AsyncIterable<Buffer>,
  sampleRate: number,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  try {
    yield* alignChunks(decodeStream(input, { sampleRate, signal }), 2);
  } catch (e) {
    if (isApiError(e))
      throw new EngineError(provider, 'upstream', `could not decode ${provider} audio: ${e.message}`, false);
    throw e;
  }
}

/**
 * PCM from a WAV byte stream: passed through when it is mono s16le (the rate is the file's), else decoded to
 * `fallbackRate` with ffmpeg.
 */
export async function wavToPcm(
  provider: string,
  source: AsyncIterable<Buffer>,
  fallbackRate: number,
  signal?: AbortSignal,
): Promise<{ sampleRate: number; chunks: AsyncIterable<Buffer> }> {
  const { info, data } = await readWav(provider, source);
  if (isMonoS16(info)) return { sampleRate: info.sampleRate, chunks: alignedPcm(data) };
  return { sampleRate: fallbackRate, chunks: ffmpegDecode(provider, rewrap(info, data), fallbackRate, signal) };
}

/** A WAV stream again (header + data) so ffmpeg can read a format we do not pass through. */
async function* rewrap(info: WavInfo, data: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(0xffffffff, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(info.format === 0xfffe ? 1 : info.format, 20);
  header.writeUInt16LE(info.channels, 22);
  header.writeUInt32LE(info.sampleRate, 24);
  header.writeUInt32LE((info.sampleRate * info.channels * info.bitsPerSample) / 8, 28);
  header.writeUInt16LE((info.channels * info.bitsPerSample) / 8, 32);
  header.writeUInt16LE(info.bitsPerSample, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(0xffffffff, 40);
  yield header;
  yield* data;
}

/** Mono s16le PCM wrapped in a canonical 44-byte WAV header (uploads to STT vendors). */
export function pcmToWav(pcm: Buffer, sampleRate: number): Buffer {
  return encodeWav(pcm, sampleRate, 1);
}

/** One buffer as an async source (bodies that arrive whole, e.g. base64 JSON). */
export async function* once(buf: Buffer): AsyncGenerator<Buffer> {
  yield buf;
}
