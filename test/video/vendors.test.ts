import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoJob } from '../../shared/contracts/video.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { TEST_ENV, waitForJob } from './helpers.ts';
import { makeMedia, startMediaServer, type LocalServer } from '../../support/doubles/media-server.ts';
import { startVendorDouble, type VendorDouble } from '../../support/doubles/video-vendors.ts';

let p: TestPlatform;
let media: LocalServer;
let vendor: VendorDouble;
let dev: { developerId: string; apiKey: string };

beforeAll(async () => {
  const files = makeMedia();
  vendor = await startVendorDouble(files['/talk.mp4']!.body, { replicateKeys: ['replicate-platform-token'] });
  media = await startMediaServer(files);
  p = await startTestPlatform({
    env: {
      ...TEST_ENV,
      HEYGEN_BASE_URL: vendor.url,
      SYNCLABS_BASE_URL: vendor.url,
      TWELVELABS_BASE_URL: vendor.url,
      RUNWAY_BASE_URL: vendor.url,
      REPLICATE_BASE_URL: vendor.replicate.url,
      REPLICATE_API_KEY: 'replicate-platform-token',
      LUMA_BASE_URL: vendor.url,
      LUMA_API_KEY: 'luma-platform-key',
      VIDEO_VENDOR_POLL_MS: '20',
      VIDEO_MODEL_SERVERS: `lipsync:wav2lip=${vendor.url},analyze:videollama=${vendor.url},avatar:sadtalker=http://127.0.0.1:9`,
    },
  });
  dev = await p.developer('pro');
});
afterAll(async () => {
  await p?.close();
  await media?.close();
  await vendor?.close();
});

async function submit(type: string, json: unknown) {
  const res = await p.request(`/v1/video/${type}`, { method: 'POST', key: dev.apiKey, json });
  return { status: res.status, body: (await res.json()) as VideoJob & { error?: { code: string; message: string } } };
}

describe('commercial adapters against local doubles', () => {
  it('refuses HeyGen without the caller’s own key (never the platform key), then runs it with a stored key', async () => {
    const body = { image_url: `${media.url}/face.jpg`, audio_url: `${media.url}/speech.wav`, provider: 'heygen' };
    const refused = await submit('avatar', body);
    expect(refused.status).toBe(400);
    expect(refused.body.error?.code).toBe('provider_unavailable');

    const stored = await p.request('/v1/provider-keys', {
      method: 'POST',
      key: dev.apiKey,
      json: { provider: 'heygen', apiKey: 'hg-caller-key' },
    });
    expect(stored.status).toBe(201);
    const sub = await submit('avatar', body);
    expect(sub.status).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result).toMatchObject({ provider: 'heygen.avatar', width: 192, height: 192 });

    const upload = vendor.calls.find((c) => c.path === '/v1/talking_photo')!;
    expect(upload.headers['x-api-key']).toBe('hg-caller-key');
    expect(upload.headers['content-type']).toBe('image/jpeg');
    const gen = JSON.parse(vendor.calls.find((c) => c.path === '/v2/video/generate')!.body.toString());
    expect(gen.video_inputs[0].character).toEqual({ type: 'talking_photo', talking_photo_id: 'tp_1' });
    expect(gen.video_inputs[0].voice.type).toBe('audio');
    expect(gen.video_inputs[0].voice.audio_url).toMatch(/^http/);
    const { rows } = await p.infra.db.query('select billable from video_jobs where id = $1', [job.id]);
    expect(rows[0].billable).toBe(false);
  });

  it('lip-syncs through Sync Labs with a stored key', async () => {
    await p.request('/v1/provider-keys', {
      method: 'POST',
      key: dev.apiKey,
      json: { provider: 'synclabs', apiKey: 'sl-caller-key' },
    });
    const sub = await submit('lipsync', {
      video_url: `${media.url}/talk.mp4`,
      audio_url: `${media.url}/speech.wav`,
      provider: 'synclabs',
    });
    expect(sub.status).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result?.provider).toBe('synclabs.lipsync-2');
    const call = vendor.calls.find((c) => c.path === '/v2/generate' && c.method === 'POST')!;
    expect(call.headers['x-api-key']).toBe('sl-caller-key');
    const body = JSON.parse(call.body.toString());
    expect(body.model).toBe('lipsync-2');
    expect(body.input.map((i: { type: string }) => i.type)).toEqual(['video', 'audio']);
  });

  it('generates with Luma on the platform key (billable)', async () => {
    const sub = await submit('generate', {
      prompt: 'A red kite over hills',
      provider: 'luma',
      duration_seconds: 5,
      width: 1024,
      height: 576,
    });
    expect(sub.status).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result?.provider).toBe('luma.ray-2');
    const call = vendor.calls.find((c) => c.path === '/dream-machine/v1/generations')!;
    expect(call.headers.authorization).toBe('Bearer luma-platform-key');
    expect(JSON.parse(call.body.toString())).toMatchObject({
      prompt: 'A red kite over hills',
      model: 'ray-2',
      duration: '5s',
      aspect_ratio: '16:9',
    });
  });
});

describe('Runway text-to-video', () => {
  it('is refused without a key, and runs with a stored one', async () => {
    const body = { prompt: 'Waves at night', provider: 'runway', duration_seconds: 5 };
    expect((await submit('generate', body)).body.error?.code).toBe('provider_unavailable');
    await p.request('/v1/provider-keys', {
      method: 'POST',
      key: dev.apiKey,
      json: { provider: 'runway', apiKey: 'rw-caller-key' },
    });
    const sub = await submit('generate', body);
    expect(sub.status).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result?.provider).toBe('runway.veo3.1_fast');
    const call = vendor.calls.find((c) => c.path === '/v1/text_to_video')!;
    expect(call.headers['x-runway-version']).toBe('2024-11-06');
    expect(call.headers.authorization).toBe('Bearer rw-caller-key');
    expect(JSON.parse(call.body.toString())).toMatchObject({
      promptText: 'Waves at night',
      ratio: '1280:720',
      duration: 4,
    });
  });
});

describe('Twelve Labs analysis', () => {
  it('indexes the video by URL, maps chapters to scenes and the transcription to the transcript', async () => {
    await p.request('/v1/provider-keys', {
      method: 'POST',
      key: dev.apiKey,
      json: { provider: 'twelvelabs', apiKey: 'tl-caller-key' },
    });
    const sub = await submit('analyze', {
      video_url: `${media.url}/talk.mp4`,
      provider: 'twelvelabs',
      tasks: ['transcribe', 'scenes', 'embed'],
    });
    expect(sub.status).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    const r = job.result as unknown as {
      provider: string;
      scenes: { description: string; start: number; end: number }[];
      transcript: { text: string };
      embeddings: { chunks: unknown[] };
    };
    expect(r.provider).toBe('twelvelabs.pegasus');
    expect(r.scenes[0]).toMatchObject({ start: 0, end: 2, description: 'Greeting: A woman says hello.' });
    expect(r.transcript.text).toBe('Hello there');
    expect(r.embeddings.chunks.length).toBe(2);
    const task = vendor.calls.find((c) => c.path === '/v1.3/tasks')!;
    expect(task.headers['x-api-key']).toBe('tl-caller-key');
    expect(String(task.headers['content-type'])).toMatch(/^multipart\/form-data/);
    expect(task.body.toString()).toMatch(/name="index_id"[\s\S]*ix_1/);
    expect(task.body.toString()).toMatch(/name="video_url"/);
  });
});

describe('self-hosted model servers', () => {
  it('runs a configured, healthy lip-sync model server', async () => {
    const sub = await submit('lipsync', {
      video_url: `${media.url}/talk.mp4`,
      audio_url: `${media.url}/speech.wav`,
      provider: 'wav2lip',
    });
    expect(sub.status).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.body.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result?.provider).toBe('wav2lip');
    const call = vendor.calls.find((c) => c.path === '/v1/lipsync')!;
    const body = JSON.parse(call.body.toString());
    expect(Object.keys(body.inputs).sort()).toEqual(['audio_url', 'video_url']);
  });

  it('runs a configured analysis model server (JSON sections) and lip-sync on Replicate with the platform token', async () => {
    const a = await submit('analyze', {
      video_url: `${media.url}/talk.mp4`,
      provider: 'videollama',
      tasks: ['scenes'],
    });
    expect(a.status).toBe(202);
    const r = await submit('lipsync', {
      video_url: `${media.url}/talk.mp4`,
      audio_url: `${media.url}/speech.wav`,
      provider: 'replicate',
    });
    expect(r.status).toBe(202);
    const [ja, jr] = await Promise.all([waitForJob(p, dev.apiKey, a.body.id), waitForJob(p, dev.apiKey, r.body.id)]);
    expect(ja.job.status, JSON.stringify(ja.job.error)).toBe('completed');
    expect(ja.job.result).toMatchObject({ provider: 'videollama', scenes: [{ description: 'a person talking' }] });
    expect(jr.job.status, JSON.stringify(jr.job.error)).toBe('completed');
    expect(jr.job.result?.provider).toBe('replicate.sync/lipsync-2');
    const call = vendor.replicate.requests.find((c) => c.path === '/v1/models/sync/lipsync-2/predictions')!;
    expect(call.headers.authorization).toBe('Bearer replicate-platform-token');
    expect(Object.keys(JSON.parse(call.body.toString()).input).sort()).toEqual(['audio', 'video']);
  });

  it('refuses an unhealthy or unconfigured one at submission with provider_unavailable', async () => {
    const down = await submit('avatar', {
      image_url: `${media.url}/face.jpg`,
      audio_url: `${media.url}/speech.wav`,
      provider: 'sadtalker',
    });
    expect(down.status).toBe(400);
    expect(down.body.error).toMatchObject({ code: 'provider_unavailable' });
    expect(down.body.error?.message).toMatch(/model server/);
    const none = await submit('lipsync', {
      video_url: `${media.url}/talk.mp4`,
      audio_url: `${media.url}/speech.wav`,
      provider: 'musetalk',
    });
    expect(none.status).toBe(400);
  });
});
