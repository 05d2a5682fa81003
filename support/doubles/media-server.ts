import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const FIXTURES = new URL('../../test/fixtures/video/', import.meta.url);

/**
 * Test media, made at test time with the real tools: the face photo (a crop of a sample image shipped in
 * @vladmandic/human's assets, see test/fixtures/video/README.md), flite speech, a short video of the face
 * talking, a face-less gradient image, garbage bytes, and a file over the size limit.
 */
export function makeMedia(): Record<string, { body: Buffer; type: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'vap-vfx-'));
  const run = (bin: string, args: string[]) => execFileSync(bin, args, { stdio: 'ignore' });
  /** The face photo as a 192 px, 25 fps video with the flite speech under it (`extra`: e.g. a length). */
  const faceTalking = (out: string, extra: string[] = []) =>
    run('ffmpeg', [
      ...['-v', 'error', '-y', '-loop', '1', '-i', new URL('face.jpg', FIXTURES).pathname, '-i', `${dir}/speech.wav`],
      ...['-vf', 'scale=192:192,format=yuv420p', '-r', '25', ...extra],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-shortest', out],
    ]);
  run('flite', ['-t', 'Hello there. This is a short test of the talking head.', '-o', `${dir}/speech.wav`]);
  run('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'gradients=s=256x256:d=1',
    '-frames:v',
    '1',
    `${dir}/noface.png`,
  ]);
  faceTalking(`${dir}/talk.mp4`, ['-t', '2']);
  writeFileSync(`${dir}/garbage.jpg`, randomBytes(4096));
  // Two scenes: the face talking, then a white card with large text (for OCR), with the speech under both.
  const font = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';
  run('ffmpeg', [
    ...['-v', 'error', '-y', '-loop', '1', '-t', '2', '-i', new URL('face.jpg', FIXTURES).pathname],
    ...['-f', 'lavfi', '-t', '2', '-i', 'color=c=white:s=256x256:r=25', '-i', `${dir}/speech.wav`],
    '-filter_complex',
    `[0:v]scale=256:256,setsar=1,fps=25,format=yuv420p[a];[1:v]drawtext=fontfile=${font}:text='OPEN LATE':fontsize=40:fontcolor=black:x=(w-text_w)/2:y=(h-text_h)/2,setsar=1,format=yuv420p[b];[a][b]concat=n=2:v=1:a=0[v]`,
    ...['-map', '[v]', '-map', '2:a', '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', `${dir}/scenes.mp4`],
  ]);
  faceTalking(`${dir}/speaker.mp4`);
  return {
    '/face.jpg': { body: readFileSync(new URL('face.jpg', FIXTURES)), type: 'image/jpeg' },
    '/speech.wav': { body: readFileSync(`${dir}/speech.wav`), type: 'audio/wav' },
    '/talk.mp4': { body: readFileSync(`${dir}/talk.mp4`), type: 'video/mp4' },
    '/noface.png': { body: readFileSync(`${dir}/noface.png`), type: 'image/png' },
    '/garbage.jpg': { body: readFileSync(`${dir}/garbage.jpg`), type: 'image/jpeg' },
    '/scenes.mp4': { body: readFileSync(`${dir}/scenes.mp4`), type: 'video/mp4' },
    '/speaker.mp4': { body: readFileSync(`${dir}/speaker.mp4`), type: 'video/mp4' },
    '/huge.mp4': { body: Buffer.alloc(3 * 1024 * 1024, 1), type: 'video/mp4' },
  };
}

export interface LocalServer {
  url: string;
  close(): Promise<void>;
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Serves the media files on loopback (reachable with OUTBOUND_ALLOWLIST=127.0.0.1). */
export async function startMediaServer(media = makeMedia()): Promise<LocalServer> {
  const server = createServer((req, res) => {
    const f = media[req.url ?? ''];
    if (!f) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length }).end(f.body);
  });
  const url = await listen(server);
  return { url, close: () => new Promise((r) => server.close(() => r())) };
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A webhook receiver that answers `failFirst` requests with `failStatus`, then 200, recording every request. */
export async function startReceiver(failFirst = 0, failStatus = 500): Promise<LocalServer & { received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const status = received.length < failFirst ? failStatus : 200;
      received.push({ headers: req.headers, body, status });
      res.writeHead(status).end();
    });
  });
  const url = await listen(server);
  return { url, received, close: () => new Promise((r) => server.close(() => r())) };
}
