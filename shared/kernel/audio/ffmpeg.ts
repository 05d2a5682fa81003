import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ApiError } from '../errors/api-error.ts';
import { spawnProcess, type Spawned } from '../process/spawn.ts';
import type { AudioFormat } from './formats.ts';
import { downmixToMono, pcmDuration } from './pcm.ts';
import { resamplePcm, resampleStream } from './resampler.ts';
import { isWav, parseWav, wavHeader } from './wav.ts';

/** A file path, a whole file in memory, or a byte stream (Node Readable or any async iterable of chunks). */
export type AudioInput = string | Buffer | Readable | AsyncIterable<Buffer | Uint8Array>;

export interface DecodeOptions {
  /** Output sample rate of the mono s16le PCM. */
  sampleRate: number;
  signal?: AbortSignal;
  /** Stop decoding after this many seconds of audio (guards the worker against hour-long uploads). */
  maxSeconds?: number;
  /** The request field the audio came from, for error messages (`file`, `audioUrl`). */
  param?: string;
}

export interface DecodedAudio {
  pcm: Buffer;
  sampleRate: number;
  /** Seconds. */
  duration: number;
}

/**
 * Decodes any container/codec ffmpeg reads into mono s16le PCM at `sampleRate`. PCM WAV is parsed in-process (no
 * ffmpeg start-up); buffers of other formats go through a temp file (MP4/M4A with the index at the end need a
 * seekable input); streams are piped. Garbage, a file with no audio stream, or an empty stream → 400
 * `invalid_audio`.
 */
export async function decodeToPcm(input: AudioInput, opts: DecodeOptions): Promise<DecodedAudio> {
  const param = opts.param ?? 'file';
  if (Buffer.isBuffer(input) && isWav(input)) {
    const fast = tryDecodeWav(input, opts);
    if (fast) return fast;
  }
  let tmp: string | null = null;
  let source: string | Readable | AsyncIterable<Buffer | Uint8Array> = Buffer.isBuffer(input) ? '' : input;
  if (Buffer.isBuffer(input)) {
    if (input.length === 0) throw new ApiError('invalid_audio', { detail: 'the audio is empty' }, param);
    tmp = join(tmpdir(), `vap-audio-${randomBytes(8).toString('hex')}`);
    await writeFile(tmp, input);
    source = tmp;
  }
  try {
    const parts: Buffer[] = [];
    for await (const c of decodeStream(source, opts)) parts.push(c);
    const pcm = Buffer.concat(parts);
    if (pcm.length < 2) throw new ApiError('invalid_audio', { detail: 'no audio samples in the input' }, param);
    return { pcm, sampleRate: opts.sampleRate, duration: pcmDuration(pcm.length, opts.sampleRate) };
  } finally {
    if (tmp) await rm(tmp, { force: true });
  }
}

function tryDecodeWav(buf: Buffer, opts: DecodeOptions): DecodedAudio | null {
  let wav;
  try {
    wav = parseWav(buf);
  } catch {
    return null; // let ffmpeg have a go (and produce its own error)
  }
  if (wav.formatTag !== 1 || wav.bitsPerSample !== 16) return null;
  let pcm = downmixToMono(Buffer.from(wav.data), wav.channels);
  if (opts.maxSeconds) pcm = pcm.subarray(0, Math.floor(opts.maxSeconds * wav.sampleRate) * 2);
  if (pcm.length < 2) {
    throw new ApiError('invalid_audio', { detail: 'no audio samples in the input' }, opts.param ?? 'file');
  }
  pcm = resamplePcm(pcm, wav.sampleRate, opts.sampleRate);
  return { pcm, sampleRate: opts.sampleRate, duration: pcmDuration(pcm.length, opts.sampleRate) };
}

/**
 * Streams decoded mono s16le PCM at `sampleRate` as ffmpeg produces it. Throws `invalid_audio` when ffmpeg cannot
 * read the input (the error arrives when the stream ends, after any audio it did decode).
 */
export async function* decodeStream(input: AudioInput, opts: DecodeOptions): AsyncGenerator<Buffer> {
  const param = opts.param ?? 'file';
  const fromFile = typeof input === 'string';
  const args = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-i', fromFile ? input : 'pipe:0'];
  args.push('-map', '0:a:0', '-vn', '-sn', '-dn', '-ac', '1', '-ar', String(opts.sampleRate));
  if (opts.maxSeconds) args.push('-t', String(opts.maxSeconds));
  args.push('-f', 's16le', '-acodec', 'pcm_s16le', 'pipe:1');
  const p = spawnProcess('ffmpeg', args, { signal: opts.signal, stdin: fromFile ? 'ignore' : 'pipe' });
  if (!fromFile) void pump(Buffer.isBuffer(input) ? Readable.from([input]) : input, p);
  let got = 0;
  let finished = false;
  try {
    for await (const chunk of p.proc.stdout!) {
      got += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
    finished = true;
  } finally {
    // The consumer stopped early (or threw): do not leave ffmpeg running.
    if (!finished) p.kill();
  }
  const { code, stderr } = await exitOf(p, opts.signal);
  if (code !== 0) throw new ApiError('invalid_audio', { detail: describeFfmpegError(stderr) }, param);
  if (got === 0) throw new ApiError('invalid_audio', { detail: 'no audio samples in the input' }, param);
}

export interface EncodeOptions {
  /** Sample rate of the incoming mono s16le chunks. */
  inputRate: number;
  format: AudioFormat;
  /** Resample to this rate first (e.g. 24000 for the OpenAI `pcm` format); default: keep the input rate. */
  outputRate?: number;
  /** Bit rate for lossy formats, e.g. "64k". */
  bitrate?: string;
  signal?: AbortSignal;
}

/**
 * Encodes a stream of mono s16le chunks into `format`, yielding encoded bytes as they are made (for streaming
 * responses). WAV (with a streamed header) and PCM are produced in-process; mp3, ogg/opus, aac and flac by an
 * ffmpeg process that is started at once, so its start-up overlaps the synthesis of the first chunk.
 */
export function encodeStream(chunks: AsyncIterable<Buffer>, opts: EncodeOptions): AsyncIterable<Buffer> {
  const rate = opts.outputRate ?? opts.inputRate;
  if (opts.format === 'pcm') return resampleStream(chunks, opts.inputRate, rate);
  if (opts.format === 'wav') return wavStream(resampleStream(chunks, opts.inputRate, rate), rate);
  const args = ['-hide_banner', '-nostdin', '-loglevel', 'error'];
  // Raw input needs no probing: without these ffmpeg reads ~5 s of audio (analyzeduration) before encoding.
  args.push('-probesize', '32', '-analyzeduration', '0', '-fflags', '+nobuffer');
  args.push('-f', 's16le', '-ar', String(opts.inputRate), '-ac', '1', '-i', 'pipe:0');
  const opusRates = [8000, 12000, 16000, 24000, 48000];
  const outRate = (opts.format === 'ogg' || opts.format === 'opus') && !opusRates.includes(rate) ? 48000 : rate;
  if (outRate !== opts.inputRate) args.push('-ar', String(outRate));
  switch (opts.format) {
    case 'mp3':
      args.push('-c:a', 'libmp3lame', '-b:a', opts.bitrate ?? '64k', '-f', 'mp3');
      break;
    case 'ogg':
    case 'opus':
      args.push('-c:a', 'libopus', '-b:a', opts.bitrate ?? '32k', '-application', 'voip');
      args.push('-page_duration', '100000', '-f', 'ogg');
      break;
    case 'aac':
      args.push('-c:a', 'aac', '-b:a', opts.bitrate ?? '64k', '-f', 'adts');
      break;
    case 'flac':
      args.push('-c:a', 'flac', '-f', 'flac');
      break;
  }
  args.push('-flush_packets', '1', 'pipe:1');
  return ffmpegOutput(encoderSpares.take(args, opts.signal), chunks, opts.signal);
}

/**
 * Encoder processes started ahead of need. ffmpeg takes 50-60 ms of CPU (and far more wall time on a busy
 * machine) to start; an encoder for a given set of arguments keeps one started spare, waiting on stdin, so the
 * next stream with those arguments begins encoding at once. A spare exists only for argument sets already used,
 * never holds the event loop open, and exits on its own (empty stdin) when this process goes away.
 */
class EncoderSpares {
  private readonly spares = new Map<string, Spawned>();

  take(args: string[], signal?: AbortSignal): Spawned {
    signal?.throwIfAborted();
    const key = args.join('\0');
    const spare = this.spares.get(key);
    this.spares.delete(key);
    let p: Spawned;
    if (spare?.running()) {
      p = spare;
      const proc = p.proc;
      for (const s of [proc.stdin, proc.stdout, proc.stderr]) (s as unknown as { ref?: () => void } | null)?.ref?.();
      proc.ref();
      if (signal) {
        const kill = () => p.kill();
        signal.addEventListener('abort', kill, { once: true });
        proc.once('close', () => signal.removeEventListener('abort', kill));
      }
    } else {
      p = spawnProcess('ffmpeg', args, { signal, stdin: 'pipe' });
    }
    this.prepare(key, args);
    return p;
  }

  private prepare(key: string, args: string[]): void {
    let spare: Spawned;
    try {
      spare = spawnProcess('ffmpeg', args, { stdin: 'pipe' });
    } catch {
      return;
    }
    spare.exited.then(
      () => this.spares.get(key) === spare && this.spares.delete(key),
      () => this.spares.get(key) === spare && this.spares.delete(key),
    );
    const proc = spare.proc;
    for (const s of [proc.stdin, proc.stdout, proc.stderr]) (s as unknown as { unref?: () => void } | null)?.unref?.();
    proc.unref();
    this.spares.get(key)?.kill();
    this.spares.set(key, spare);
  }
}

const encoderSpares = new EncoderSpares();

async function* ffmpegOutput(p: Spawned, chunks: AsyncIterable<Buffer>, signal?: AbortSignal): AsyncGenerator<Buffer> {
  const pumping = pump(chunks, p);
  let finished = false;
  try {
    for await (const chunk of p.proc.stdout!) yield chunk as Buffer;
    finished = true;
    const pumpErr = await pumping;
    if (pumpErr) throw pumpErr;
    const { code, stderr } = await exitOf(p, signal);
    if (code !== 0) throw new Error(`ffmpeg encoder failed: ${describeFfmpegError(stderr)}`);
  } finally {
    if (!finished) p.kill();
  }
}

/**
 * A WAV stream: the header travels with the first audio chunk, so the first bytes out mean audio exists (a
 * failing engine fails before anything is sent, and time-to-first-byte measures real audio).
 */
async function* wavStream(chunks: AsyncIterable<Buffer>, sampleRate: number): AsyncGenerator<Buffer> {
  let header: Buffer | null = wavHeader({ sampleRate, channels: 1, bitsPerSample: 16 });
  for await (const chunk of chunks) {
    if (header) {
      yield Buffer.concat([header, chunk]);
      header = null;
    } else {
      yield chunk;
    }
  }
  if (header) yield header;
}

/** Writes the input into ffmpeg's stdin with backpressure; resolves with the input's error, if any. */
async function pump(input: Readable | AsyncIterable<Buffer | Uint8Array>, p: Spawned): Promise<Error | null> {
  const stdin = p.proc.stdin!;
  try {
    for await (const chunk of input) {
      if (stdin.destroyed) break;
      if (!stdin.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            stdin.off('drain', done);
            stdin.off('close', done);
            resolve();
          };
          stdin.on('drain', done);
          stdin.on('close', done);
        });
      }
    }
    return null;
  } catch (e) {
    p.kill();
    return e as Error;
  } finally {
    stdin.end();
  }
}

/**
 * How ffmpeg ended. A spawn failure (no ffmpeg) reads as an unreadable input with the error as its reason, as it
 * always has; an abort rethrows the signal's reason.
 */
async function exitOf(p: Spawned, signal?: AbortSignal): Promise<{ code: number | null; stderr: string }> {
  try {
    return { code: await p.exited, stderr: p.stderr() };
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    return { code: -1, stderr: p.stderr() || (e as Error).message };
  }
}

/** The last meaningful ffmpeg error line, without file paths. */
export function describeFfmpegError(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.find((l) => /matches no streams/.test(l))
    ? 'the input has no audio stream'
    : (lines.reverse().find((l) => !/^Error (opening|while)|Conversion failed/.test(l)) ?? lines[0] ?? 'unreadable');
  return line
    .replace(/(\/[\w.-]+)+/g, '<input>')
    .replace(/^\[[^\]]+\]\s*/, '')
    .replace(/^<input>:\s*/, '')
    .slice(0, 200);
}
