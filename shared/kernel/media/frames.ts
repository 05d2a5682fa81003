import { spawnProcess } from '../process/spawn.ts';
import { ToolFailure } from './tool-failure.ts';

/**
 * Decodes a video into RGB24 frames of an exact size and rate (ffmpeg scale + fps filters), yielded one at a
 * time without holding more than one frame plus the pipe's buffer in memory.
 */
export async function* readFrames(
  path: string,
  width: number,
  height: number,
  fps: number,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  const p = spawnProcess(
    'ffmpeg',
    [
      ...['-hide_banner', '-nostdin', '-v', 'error', '-i', path, '-an'],
      ...['-vf', `fps=${fps},scale=${width}:${height}:flags=bilinear`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    ],
    { signal },
  );
  const size = width * height * 3;
  let frame = new Uint8Array(size);
  let filled = 0;
  try {
    for await (const chunk of p.proc.stdout as AsyncIterable<Buffer>) {
      let off = 0;
      while (off < chunk.length) {
        const n = Math.min(size - filled, chunk.length - off);
        frame.set(chunk.subarray(off, off + n), filled);
        filled += n;
        off += n;
        if (filled === size) {
          yield frame;
          frame = new Uint8Array(size);
          filled = 0;
        }
      }
    }
    const code = await p.exited.catch((e: Error) => {
      throw signal.aborted ? e : new ToolFailure('unavailable', `ffmpeg: ${e.message}`);
    });
    if (code !== 0) {
      throw new ToolFailure('unreadable', `The video could not be decoded (${p.stderr().trim().slice(-200)}).`);
    }
  } finally {
    p.kill();
  }
}
