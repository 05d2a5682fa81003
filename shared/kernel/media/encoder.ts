import { once } from 'node:events';
import { spawnProcess, type Spawned } from '../process/spawn.ts';
import { ToolFailure } from './tool-failure.ts';
import { ffmpeg } from './ffmpeg.ts';

export interface EncoderOptions {
  width: number;
  height: number;
  fps: number;
  /** Audio muxed alongside (AAC); output ends with the shorter of the two. */
  audioPath?: string;
  /** Filter applied to the audio, e.g. `apad` so that the video's length decides. */
  audioFilter?: string;
  /** Filter applied to the frames before encoding (e.g. a head-sway crop); output size must be even. */
  videoFilter?: string;
  outPath: string;
  signal?: AbortSignal;
  /** x264 preset; ultrafast keeps 512×512 far above real time on one core. */
  preset?: string;
}

/**
 * An ffmpeg process that takes raw RGB24 frames on stdin and writes H.264 (yuv420p) + AAC MP4 with faststart.
 * `write` respects back-pressure, so memory stays flat however long the clip.
 */
export class FrameEncoder {
  private readonly p: Spawned;
  private readonly done: Promise<void>;

  constructor(readonly opts: EncoderOptions) {
    const args = ['-hide_banner', '-nostdin', '-v', 'error', '-y'];
    args.push('-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${opts.width}x${opts.height}`, '-r', String(opts.fps));
    args.push('-i', 'pipe:0');
    if (opts.audioPath) args.push('-i', opts.audioPath);
    if (opts.videoFilter) args.push('-vf', opts.videoFilter);
    args.push('-map', '0:v:0');
    if (opts.audioPath && opts.audioFilter) args.push('-af', opts.audioFilter);
    if (opts.audioPath) args.push('-map', '1:a:0', '-c:a', 'aac', '-b:a', '96k', '-ar', '44100', '-shortest');
    args.push('-c:v', 'libx264', '-preset', opts.preset ?? 'ultrafast', '-crf', '23', '-pix_fmt', 'yuv420p');
    args.push('-threads', '2', '-movflags', '+faststart', opts.outPath);
    this.p = spawnProcess('ffmpeg', args, { stdin: 'pipe', stdout: 'ignore', signal: opts.signal });
    this.done = this.p.exited.then(
      (code) => {
        if (code !== 0) {
          throw new ToolFailure('failed', `encoder failed: ${this.p.stderr().trim().slice(-300)}`);
        }
      },
      (e: Error) => {
        throw opts.signal?.aborted ? e : new ToolFailure('unavailable', `ffmpeg: ${e.message}`);
      },
    );
    this.done.catch(() => {});
  }

  async write(frame: Uint8Array): Promise<void> {
    const stdin = this.p.proc.stdin!;
    if (!stdin.write(frame)) {
      await Promise.race([once(stdin, 'drain'), this.done]);
    }
  }

  async finish(): Promise<void> {
    this.p.proc.stdin!.end();
    await this.done;
  }

  kill(): void {
    this.p.kill();
  }
}

/** Decodes an image to RGB24 at an exact size. */
export async function decodeImageRgb(
  path: string,
  width: number,
  height: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const buf = await ffmpeg(
    [
      '-i',
      path,
      '-frames:v',
      '1',
      '-vf',
      `scale=${width}:${height}:flags=bicubic`,
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-',
    ],
    { signal, inputFault: true },
  );
  if (buf.length !== width * height * 3) throw new ToolFailure('unreadable', 'The image could not be decoded.');
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}

/** Fits (w, h) into a box whose longest side is `size`, with even sides (H.264 4:2:0 needs them). */
export function fitEven(w: number, h: number, size: number): { width: number; height: number } {
  const k = size / Math.max(w, h);
  const even = (v: number) => Math.max(2, Math.round((v * k) / 2) * 2);
  return { width: even(w), height: even(h) };
}
