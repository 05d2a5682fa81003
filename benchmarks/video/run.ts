/**
 * Video benchmarks (CPU only; default engines):
 *   npm run bench:video            (BENCH_VIDEO_ONLY=avatar,lipsync,dub,latency to run a subset)
 * - avatar speed: generated seconds per wall second, 512×512 at 25 fps (engine, warm)        target ≥ 2×
 * - lipsync speed: the same for a 10 s 512×512 25 fps talking-face clip (engine, warm)       target ≥ 0.5×
 * - dub end to end: a 30 s English clip → Spanish, POST to completed through the platform     target ≤ 60 s
 * - submit→start latency: POST /v1/video/generate → the worker marks the job processing       target p50 ≤ 50 ms
 * The platform runs in this process (api + cpu + gpu roles) on a throwaway database.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { startPlatform } from '../../scripts/platform.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import { ClassicalAvatarEngine } from '../../shared/engines/avatar/classical.ts';
import { ClassicalLipsyncEngine } from '../../shared/engines/lipsync/classical.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';

const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://vap:vap@127.0.0.1:5432/postgres';
const ONLY = (process.env.BENCH_VIDEO_ONLY ?? 'avatar,lipsync,dub,latency').split(',');
const FACE = new URL('../../test/fixtures/video/face.jpg', import.meta.url).pathname;
const dir = await mkdtemp(join(tmpdir(), 'vap-bench-video-'));
const run = (bin: string, args: string[]) => execFileSync(bin, args, { stdio: 'ignore' });
const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
const signal = new AbortController().signal;

const SENTENCES = [
  'Good morning and welcome to this short presentation about our new product line.',
  'Today we will look at three things: the design, the price, and the delivery dates.',
  'The design is simple, light and strong, and it comes in four colours.',
  'The price starts at twenty dollars for the small model and forty for the large one.',
  'Orders placed this week will arrive before the end of the month.',
  'Thank you for listening, and please send us your questions by email.',
];

/** flite speech of the sentences, repeated until it lasts at least `seconds`, trimmed to exactly that. */
function speech(seconds: number, name: string): string {
  const raw = join(dir, `${name}-raw.wav`);
  let text = '';
  while (text.split(' ').length < seconds * 3.2) text += ` ${SENTENCES.join(' ')}`;
  run('flite', ['-t', text.trim(), '-o', raw]);
  const out = join(dir, `${name}.wav`);
  run('ffmpeg', ['-v', 'error', '-y', '-i', raw, '-t', String(seconds), '-af', 'apad', out]);
  return out;
}

/** A 512×512 25 fps clip of the face with a gentle zoom (so landmarks move), with `audio` under it. */
function faceVideo(audio: string, seconds: number, name: string): string {
  const out = join(dir, `${name}.mp4`);
  run('ffmpeg', [
    ...['-v', 'error', '-y', '-loop', '1', '-i', FACE, '-i', audio, '-t', String(seconds)],
    ...['-vf', "scale=512:512,zoompan=z='1.05+0.05*sin(on/30)':d=1:s=512x512:fps=25,format=yuv420p"],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-c:a', 'aac', '-shortest', out],
  ]);
  return out;
}

const figures: string[] = [];
console.log(`video benchmarks on ${cpus().length} cores (${cpus()[0]?.model ?? 'cpu'})`);

if (ONLY.includes('avatar')) {
  const engine = new ClassicalAvatarEngine();
  const audio = speech(20, 'avatar');
  const req = { imagePath: FACE, audioPath: audio, size: 512, fps: 25, signal, onProgress: () => {} };
  await engine.render({ ...req, audioPath: speech(2, 'warm'), outPath: join(dir, 'warm.mp4') });
  const t = performance.now();
  const out = await engine.render({ ...req, outPath: join(dir, 'avatar.mp4') });
  const wall = (performance.now() - t) / 1000;
  const speed = out.durationSeconds / wall;
  figures.push(
    `avatar   ${out.width}×${out.height} 25 fps: ${out.durationSeconds.toFixed(1)} s in ${wall.toFixed(2)} s = ${speed.toFixed(2)}× real time (target ≥ 2×) ${pass(speed >= 2)}`,
  );
  console.log(figures.at(-1));
}

if (ONLY.includes('lipsync')) {
  const engine = new ClassicalLipsyncEngine(Number(process.env.VIDEO_LIPSYNC_KEYFRAME_EVERY ?? 5));
  const video = faceVideo(speech(10, 'orig'), 10, 'lipsync-in');
  const audio = speech(10, 'replacement');
  const req = { videoPath: video, audioPath: audio, size: 512, fps: 25, signal, onProgress: () => {} };
  await engine.sync({ ...req, videoPath: faceVideo(speech(1, 'w2'), 1, 'warm-in'), outPath: join(dir, 'warm-ls.mp4') });
  const t = performance.now();
  const out = await engine.sync({ ...req, outPath: join(dir, 'lipsync.mp4') });
  const wall = (performance.now() - t) / 1000;
  const speed = out.durationSeconds / wall;
  figures.push(
    `lipsync  ${out.width}×${out.height} 25 fps: ${out.durationSeconds.toFixed(1)} s in ${wall.toFixed(2)} s = ${speed.toFixed(2)}× real time (target ≥ 0.5×) ${pass(speed >= 0.5)}`,
  );
  console.log(figures.at(-1));
}

if (ONLY.includes('dub') || ONLY.includes('latency')) {
  const dbName = `vap_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  await admin(`create database ${dbName}`);
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'warn',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: ADMIN_URL.replace(/\/[^/]*$/, `/${dbName}`),
    REDIS_PREFIX: `benchv${randomBytes(3).toString('hex')}`,
    S3_EMBEDDED_DIR: join(dir, 's3'),
    S3_EMBEDDED_PORT: '0',
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    RATE_LIMITS: 'starter:1000000,pro:1000000,scale:1000000',
    // The api runs without the realtime role here, so it needs the session-token secret a deployment would set.
    REALTIME_SESSION_SECRET: randomBytes(32).toString('base64url'),
  });
  const platform = await startPlatform(config, createLogger('warn'), ['api', 'cpu', 'gpu']);
  try {
    const dev = await insertDeveloper(platform.infra.db, 'bench', 'scale');
    const { key } = await mintKey(platform.infra.db, dev.id, 'bench');
    const post = async (type: string, json: unknown) => {
      const res = await fetch(`${platform.url}/v1/video/${type}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(json),
      });
      if (res.status !== 202) throw new Error(`${type} answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    };
    const row = async (id: string) =>
      (
        await platform.infra.db.query<{ status: string; started_at: Date | null; error: unknown }>(
          'select status, started_at, error from video_jobs where id = $1',
          [id],
        )
      ).rows[0]!;
    const finished = async (id: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const r = await row(id);
        if (r.status === 'completed') return r;
        if (r.status === 'failed') throw new Error(`job failed: ${JSON.stringify(r.error)}`);
        if (Date.now() > deadline) throw new Error('job did not finish in time');
        await new Promise((res) => setTimeout(res, 25));
      }
    };

    if (ONLY.includes('latency')) {
      const samples: number[] = [];
      // Warm-up (first job loads engines and opens connections).
      await finished(
        await post('generate', { prompt: 'warm', duration_seconds: 1, width: 256, height: 256, fps: 8 }),
        60_000,
      );
      for (let i = 0; i < 25; i++) {
        const t0 = Date.now();
        const id = await post('generate', {
          prompt: `latency ${i}`,
          duration_seconds: 1,
          width: 256,
          height: 256,
          fps: 8,
        });
        const r = await finished(id, 60_000);
        samples.push(r.started_at!.getTime() - t0);
      }
      samples.sort((a, b) => a - b);
      const p50 = samples[Math.floor(samples.length / 2)]!;
      const p95 = samples[Math.floor(samples.length * 0.95)]!;
      figures.push(
        `submit→start over ${samples.length} jobs: p50 ${p50} ms, p95 ${p95} ms (target p50 ≤ 50 ms) ${pass(p50 <= 50)}`,
      );
      console.log(figures.at(-1));
    }

    if (ONLY.includes('dub')) {
      const clip = faceVideo(speech(30, 'dub'), 30, 'dub-in');
      const { createServer } = await import('node:http');
      const { readFileSync } = await import('node:fs');
      const body = readFileSync(clip);
      const server = createServer((_req, res) => res.writeHead(200, { 'content-length': body.length }).end(body));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/dub.mp4`;
      const t = performance.now();
      const id = await post('dub', { video_url: url, target_language: 'es' });
      await finished(id, 600_000);
      const wall = (performance.now() - t) / 1000;
      server.close();
      figures.push(`dub      30 s clip en→es end to end: ${wall.toFixed(1)} s (target ≤ 60 s) ${pass(wall <= 60)}`);
      console.log(figures.at(-1));
    }
  } finally {
    await platform.stop();
    await admin(`drop database if exists ${dbName} with (force)`);
  }
}

console.log(`\nsummary\n  ${figures.join('\n  ')}`);
await rm(dir, { recursive: true, force: true });
process.exit(0);
