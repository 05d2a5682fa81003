import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoJob } from '../../shared/contracts/video.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { TEST_ENV, waitForJob } from './helpers.ts';
import { listen, startReceiver, type LocalServer, type Received } from '../../support/doubles/media-server.ts';
import { createServer } from 'node:http';

let p: TestPlatform;
let hook: LocalServer & { received: Received[] };
let media: LocalServer;
const children: ChildProcess[] = [];

/** A worker process (tsx scripts/start.ts cpu,gpu) on the test platform's database, Redis prefix and S3. */
function spawnWorker(): ChildProcess {
  const c = p.config;
  // `node --import tsx` rather than the tsx CLI, so that the pid killed is the worker itself (the CLI would
  // leave its node child running when it is SIGKILLed).
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', 'cpu,gpu'], {
    cwd: new URL('../../', import.meta.url).pathname,
    env: {
      ...process.env,
      ...TEST_ENV,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: c.DATABASE_URL,
      DATABASE_POOL_MAX: '4',
      REDIS_URL: c.REDIS_URL,
      REDIS_PREFIX: c.REDIS_PREFIX,
      S3_ENDPOINT: p.infra.embeddedS3!.endpoint,
      S3_BUCKET: c.S3_BUCKET,
      // Full size, so the render lasts long enough to be killed in the middle.
      VIDEO_AVATAR_SIZE: '512',
      // The dead worker's lock expires in 5 s instead of the default 30 s (a live worker renews it every 2.5 s; the
      // render runs in ffmpeg, off its event loop), so the job is handed back within about 10 s, not a minute.
      WORKER_STALLED_INTERVAL_MS: '5000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: false,
  });
  children.push(child);
  return child;
}

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'], env: TEST_ENV });
  hook = await startReceiver();
  // ~12 s of flite speech so that the render takes a few seconds.
  const wav = join(tmpdir(), `vap-crash-${Date.now()}.wav`);
  execFileSync('flite', [
    '-t',
    'This is a longer recording for the crash test. The worker that renders it is killed in the middle of the job. ' +
      'Another worker picks the job up after the lock expires, and the job still completes exactly once.',
    '-o',
    wav,
  ]);
  const files: Record<string, Buffer> = {
    '/face.jpg': readFileSync(new URL('../fixtures/video/face.jpg', import.meta.url)),
    '/long.wav': readFileSync(wav),
  };
  const server = createServer((req, res) => {
    const f = files[req.url ?? ''];
    if (!f) return res.writeHead(404).end();
    res.writeHead(200, { 'content-length': f.length }).end(f);
  });
  const url = await listen(server);
  media = { url, close: () => new Promise((r) => server.close(() => r())) };
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await p?.close();
  await hook?.close();
  await media?.close();
});

describe('a worker killed mid-job (SIGKILL)', () => {
  it('still ends with exactly one completed job, one webhook and one charge', { timeout: 300_000 }, async () => {
    const dev = await p.developer('pro');
    const first = spawnWorker();
    const res = await p.request('/v1/video/avatar', {
      method: 'POST',
      key: dev.apiKey,
      json: {
        image_url: `${media.url}/face.jpg`,
        audio_url: `${media.url}/long.wav`,
        webhook_url: `${hook.url}/crash`,
      },
    });
    const job = (await res.json()) as VideoJob;
    expect(res.status).toBe(202);

    // Kill the worker mid-job (once it reports progress, before the end).
    await waitUntil(
      async () => {
        const j = (await (await p.request(`/v1/video/${job.id}`, { key: dev.apiKey })).json()) as VideoJob;
        if (j.status === 'completed') throw new Error('the render ended before the worker could be killed');
        // Any progress past the start: beside a CPU hog a poll answered slower than the render's last quarter.
        return j.status === 'processing' && j.progress > 0;
      },
      // The worker boots the platform under tsx first: past 90 s in a whole run at load 8.
      150_000,
      20,
    );
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const mid = (await (await p.request(`/v1/video/${job.id}`, { key: dev.apiKey })).json()) as VideoJob;
    expect(mid.status).toBe('processing');

    // A new worker: BullMQ's stalled-job check hands the job back once the dead worker's lock expires (~5 s).
    spawnWorker();
    const { job: done } = await waitForJob(p, dev.apiKey, job.id, 150_000);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');

    await waitUntil(() => hook.received.length >= 1, 20_000);
    // Give a duplicate the time it would need to show up.
    await new Promise((r) => setTimeout(r, 1500));
    expect(hook.received).toHaveLength(1);
    const { rows } = await p.infra.db.query(
      "select count(*)::int as n from credit_ledger where request_id = $1 and status = 'committed'",
      [job.id],
    );
    expect(rows[0].n).toBe(1);
    const { rows: jobRows } = await p.infra.db.query('select attempts, status from video_jobs where id = $1', [job.id]);
    expect(jobRows[0]).toMatchObject({ status: 'completed' });
    expect(jobRows[0].attempts).toBeGreaterThanOrEqual(2);
  });
});
