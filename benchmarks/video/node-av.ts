/**
 * In-process decoding/encoding (node-av: FFmpeg's libraries bound to Node) against the ffmpeg CLI, on the two
 * frame pipelines the default avatar and lip-sync engines run: decode a video to RGB24 frames at the output size
 * and rate (shared/kernel/media/frames.ts), and encode RGB24 frames to H.264 (shared/kernel/media/encoder.ts).
 *
 * node-av is not a dependency of the platform; install it somewhere else and point NODE_AV_DIR at that folder:
 *   mkdir /tmp/nodeav && cd /tmp/nodeav && npm init -y && npm install node-av
 *   NODE_AV_DIR=/tmp/nodeav npx tsx benchmarks/video/node-av.ts <video.mp4> [runs]
 */
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FrameEncoder } from '../../shared/kernel/media/encoder.ts';
import { readFrames } from '../../shared/kernel/media/frames.ts';

const [input, runsArg] = process.argv.slice(2);
if (!input || !process.env.NODE_AV_DIR) {
  console.error('usage: NODE_AV_DIR=<folder with node-av installed> tsx benchmarks/video/node-av.ts <video> [runs]');
  process.exit(2);
}
const runs = Number(runsArg ?? 3);
const W = 512;
const H = 384;
const FPS = 25;
const require = createRequire(join(process.env.NODE_AV_DIR, 'package.json'));
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an optional package without types here
const av: any = await import(pathToFileURL(require.resolve('node-av')).href);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const avc: any = await import(pathToFileURL(require.resolve('node-av/constants')).href);

async function cliDecode(): Promise<{ frames: number; bytes: number }> {
  let frames = 0;
  let bytes = 0;
  for await (const f of readFrames(input!, W, H, FPS, new AbortController().signal)) {
    frames++;
    bytes += f.length;
  }
  return { frames, bytes };
}

async function avDecode(): Promise<{ frames: number; bytes: number }> {
  const demuxer = await av.Demuxer.open(input);
  const stream = demuxer.video();
  const decoder = await av.Decoder.create(stream);
  const filter = av.FilterAPI.create(`fps=${FPS},scale=${W}:${H}:flags=bilinear,format=rgb24`);
  let frames = 0;
  let bytes = 0;
  try {
    for await (const frame of filter.frames(decoder.frames(demuxer.packets(stream.index)))) {
      if (!frame) continue;
      const buf: Buffer = frame.toBuffer();
      frames++;
      bytes += buf.length;
      frame.free?.();
    }
  } finally {
    filter.close?.();
    decoder.close?.();
    await demuxer.close?.();
  }
  return { frames, bytes };
}

function testFrames(n: number): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => {
    const f = new Uint8Array(W * H * 3);
    for (let p = 0; p < f.length; p += 3) f[p] = (p / 3 + i * 7) & 255;
    return f;
  });
}

async function cliEncode(frames: Uint8Array[], out: string): Promise<void> {
  const enc = new FrameEncoder({ width: W, height: H, fps: FPS, outPath: out });
  for (const f of frames) await enc.write(f);
  await enc.finish();
}

async function avEncode(frames: Uint8Array[], out: string): Promise<void> {
  const encoder = await av.Encoder.create(avc.FF_ENCODER_LIBX264, {
    timeBase: { num: 1, den: FPS },
    frameRate: { num: FPS, den: 1 },
    options: { preset: 'ultrafast', crf: '23', threads: '2' },
  });
  const toYuv = av.FilterAPI.create('format=yuv420p');
  const muxer = await av.Muxer.open(out);
  const index = muxer.addStream(encoder);
  async function* rgb() {
    for (let i = 0; i < frames.length; i++) {
      const f = av.Frame.fromVideoBuffer(Buffer.from(frames[i]!), {
        width: W,
        height: H,
        format: avc.AV_PIX_FMT_RGB24,
        timeBase: { num: 1, den: FPS },
      });
      f.pts = BigInt(i);
      yield f;
    }
  }
  try {
    for await (const pkt of encoder.packets(toYuv.frames(rgb()))) if (pkt) await muxer.writePacket(pkt, index);
  } finally {
    await muxer.close?.();
    encoder.close?.();
  }
}

async function time(label: string, fn: () => Promise<unknown>): Promise<void> {
  const ms: number[] = [];
  let last: unknown;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    last = await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  console.log(
    JSON.stringify({ label, runs, median_ms: Math.round(ms[ms.length >> 1]!), min_ms: Math.round(ms[0]!), last }),
  );
}

await time('decode rgb24 512x384@25 ffmpeg CLI (readFrames)', cliDecode);
await time('decode rgb24 512x384@25 node-av', avDecode);
const frames = testFrames(250);
await time('encode 250 rgb24 frames libx264 ffmpeg CLI (FrameEncoder)', () =>
  cliEncode(frames, join(tmpdir(), 'bench-cli.mp4')),
);
await time('encode 250 rgb24 frames libx264 node-av', () => avEncode(frames, join(tmpdir(), 'bench-av.mp4')));
