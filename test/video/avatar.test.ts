import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoJob } from '../../shared/contracts/video.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { probeUrl, TEST_ENV, waitForJob } from './helpers.ts';
import {
  startMediaServer,
  startReceiver,
  type LocalServer,
  type Received,
} from '../../support/doubles/media-server.ts';

let p: TestPlatform;
let media: LocalServer;
let hook: LocalServer & { received: Received[] };
let dev: { developerId: string; apiKey: string };

beforeAll(async () => {
  [p, media, hook] = await Promise.all([startTestPlatform({ env: TEST_ENV }), startMediaServer(), startReceiver()]);
  dev = await p.developer('pro');
});
afterAll(async () => {
  await p?.close();
  await media?.close();
  await hook?.close();
});

async function submit(
  type: string,
  json: unknown,
  key = dev.apiKey,
): Promise<{ status: number; body: VideoJob & { error?: { code: string; message: string } } }> {
  const res = await p.request(`/v1/video/${type}`, { method: 'POST', key, json });
  return { status: res.status, body: (await res.json()) as never };
}

describe('avatar (default engine) end to end', () => {
  it('renders a talking head from a photo and speech, with rising progress, a signed webhook and one charge', async () => {
    const webhook_url = `${hook.url}/hooks/avatar`;
    const sub = await submit('avatar', {
      image_url: `${media.url}/face.jpg`,
      audio_url: `${media.url}/speech.wav`,
      webhook_url,
    });
    expect(sub.status).toBe(202);
    expect(sub.body).toMatchObject({
      type: 'avatar',
      status: 'pending',
      provider: 'default',
      owner_id: dev.developerId,
    });

    const { job, progress } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(progress.length).toBeGreaterThan(2);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThanOrEqual(progress[i - 1]!);
    expect(job.result).toMatchObject({ width: 256, height: 256, provider: 'default:classical-warp' });
    expect(job.result!.duration_seconds).toBeGreaterThan(2);
    expect(job.completed_at).toBeTruthy();

    const probe = await probeUrl(job.result!.video_url!);
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);

    // The webhook: one notification, verifiable with the standardwebhooks library and the address's secret.
    await waitUntil(() => hook.received.length >= 1);
    const secretRes = await p.request(`/v1/webhooks/secret?url=${encodeURIComponent(webhook_url)}`, {
      key: dev.apiKey,
    });
    const { secret } = (await secretRes.json()) as { secret: string };
    const got = hook.received[0]!;
    const payload = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as {
      type: string;
      data: VideoJob;
    };
    expect(payload.type).toBe('video.job.completed');
    expect(payload.data).toMatchObject({ id: job.id, status: 'completed' });

    const { rows } = await p.infra.db.query(
      "select units, status from credit_ledger where request_id = $1 and status = 'committed'",
      [job.id],
    );
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].units)).toBeCloseTo(job.result!.duration_seconds, 1);
    const { rows: gpu } = await p.infra.db.query('select gpu_seconds from video_jobs where id = $1', [job.id]);
    expect(gpu[0].gpu_seconds).toBeGreaterThan(0);
    expect(hook.received).toHaveLength(1);
  });

  it('synthesizes text first (flite), translating it when target_language is set', async () => {
    const sub = await submit('avatar', {
      image_url: `${media.url}/face.jpg`,
      text: 'Hello, my friend.',
      target_language: 'es',
    });
    expect(sub.status).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result!.duration_seconds).toBeGreaterThan(0.3);
  });

  it('fails with no_face_detected when the image has no face, and notifies the failure', async () => {
    const webhook_url = `${hook.url}/hooks/noface`;
    const sub = await submit('avatar', {
      image_url: `${media.url}/noface.png`,
      audio_url: `${media.url}/speech.wav`,
      webhook_url,
    });
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status).toBe('failed');
    expect(job.error?.code).toBe('no_face_detected');
    await waitUntil(() => hook.received.find((r) => JSON.parse(r.body).data.id === job.id));
    const r = hook.received.find((x) => JSON.parse(x.body).data.id === job.id)!;
    expect(JSON.parse(r.body).type).toBe('video.job.failed');
  });

  it('fails unreadable and too-large inputs with input_unreadable / input_too_large', async () => {
    const bad = await submit('avatar', { image_url: `${media.url}/garbage.jpg`, audio_url: `${media.url}/speech.wav` });
    const big = await submit('lipsync', { video_url: `${media.url}/huge.mp4`, audio_url: `${media.url}/speech.wav` });
    const [a, b] = await Promise.all([waitForJob(p, dev.apiKey, bad.body.id), waitForJob(p, dev.apiKey, big.body.id)]);
    expect(a.job.error?.code).toBe('input_unreadable');
    expect(b.job.error?.code).toBe('input_too_large');
  });

  it('refuses private-network URLs, bad bodies and unconfigured providers at submission', async () => {
    const priv = await submit('avatar', { image_url: 'http://10.1.2.3/x', audio_url: `${media.url}/speech.wav` });
    expect(priv.status).toBe(400);
    expect(priv.body.error).toMatchObject({ code: 'url_not_allowed', param: 'image_url' });
    const both = await submit('avatar', {
      image_url: `${media.url}/face.jpg`,
      audio_url: `${media.url}/speech.wav`,
      text: 'hi',
    });
    expect(both.status).toBe(400);
    const range = await submit('generate', { prompt: 'x', duration_seconds: 31 });
    expect(range.status).toBe(400);
    expect(range.body.error).toMatchObject({ code: 'validation_failed' });
    const unconfigured = await submit('avatar', {
      image_url: `${media.url}/face.jpg`,
      audio_url: `${media.url}/speech.wav`,
      provider: 'sadtalker',
    });
    expect(unconfigured.status).toBe(400);
    expect(unconfigured.body.error).toMatchObject({ code: 'provider_unavailable' });
    const noTtsKey = await submit('avatar', {
      image_url: `${media.url}/face.jpg`,
      text: 'Hello',
      tts_provider: 'elevenlabs',
    });
    expect(noTtsKey.status).toBe(400);
    expect(noTtsKey.body.error).toMatchObject({ code: 'provider_unavailable' });
    const hookPriv = await submit('generate', { prompt: 'x', webhook_url: 'http://192.168.1.1/hook' });
    expect(hookPriv.body.error).toMatchObject({ code: 'url_not_allowed', param: 'webhook_url' });
  });

  it('shows a job to its owner only', async () => {
    const sub = await submit('generate', { prompt: 'Owner only', duration_seconds: 1, width: 256, height: 256 });
    const other = await p.developer();
    const res = await p.request(`/v1/video/${sub.body.id}`, { key: other.apiKey });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});

describe('generate (default: title card)', () => {
  it('renders a labelled title card of the requested size and length', async () => {
    const sub = await submit('generate', {
      prompt: 'A lighthouse at dusk',
      duration_seconds: 2,
      width: 320,
      height: 256,
      fps: 12,
    });
    expect(sub.status).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result).toMatchObject({ provider: 'default:title-card', width: 320, height: 256, duration_seconds: 2 });
    const probe = await probeUrl(job.result!.video_url!);
    expect(probe.streams[0]).toMatchObject({ codec_name: 'h264', width: 320, height: 256 });
  });
});
