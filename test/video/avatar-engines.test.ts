import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoEngine, VideoJob } from '../../shared/contracts/video.ts';
import { makeMedia, startMediaServer, type LocalServer } from '../../support/doubles/media-server.ts';
import { startModelServerDouble, type ModelServerCall } from '../../support/doubles/model-server.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { TEST_ENV, waitForJob } from './helpers.ts';

/**
 * The contract's avatar engines (issue 23): the local `default`, five self-hosted GPU engines behind the
 * model-server contract and one commercial engine, each saying whether it can run here. No GPU here: sadtalker is
 * served by a local model-server double; the others are not configured and say what to configure.
 */
let p: TestPlatform;
let media: LocalServer;
let gpu: LocalServer & { calls: ModelServerCall[] };
let dev: { developerId: string; apiKey: string };

beforeAll(async () => {
  const files = makeMedia();
  gpu = await startModelServerDouble('avatar', 'sadtalker-256', files['/talk.mp4']!.body);
  [p, media] = await Promise.all([
    startTestPlatform({ env: { ...TEST_ENV, VIDEO_MODEL_SERVERS: `avatar:sadtalker=${gpu.url}` } }),
    startMediaServer(files),
  ]);
  dev = await p.developer('pro');
});
afterAll(async () => {
  await p?.close();
  await media?.close();
  await gpu?.close();
});

async function engines(key = dev.apiKey): Promise<VideoEngine[]> {
  const res = await p.request('/v1/video/avatar/engines', { key });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: VideoEngine[] }).data;
}

describe('GET /v1/video/avatar/engines', () => {
  it('lists the local engine, the five GPU engines and the commercial one, with what each needs', async () => {
    const list = await engines();
    expect(list.map((e) => [e.id, e.kind, e.available])).toEqual([
      ['default', 'local', true],
      ['sadtalker', 'self-hosted', true],
      ['liveportrait', 'self-hosted', false],
      ['hallo', 'self-hosted', false],
      ['echomimic', 'self-hosted', false],
      ['aniportrait', 'self-hosted', false],
      ['heygen', 'commercial', false],
    ]);
    const byId = new Map(list.map((e) => [e.id, e]));
    expect(byId.get('sadtalker')).not.toHaveProperty('configure');
    expect(byId.get('hallo')!.configure).toContain('VIDEO_MODEL_SERVERS=avatar:hallo=');
    expect(byId.get('heygen')!.configure).toContain('POST /v1/provider-keys');
    expect(byId.get('heygen')!.billing).toBe('caller-key');
  });

  it("shows the commercial engine available once the caller's key is stored, to that caller only", async () => {
    const stored = await p.request('/v1/provider-keys', {
      method: 'POST',
      key: dev.apiKey,
      json: { provider: 'heygen', apiKey: 'hg-test-key-0001' },
    });
    expect(stored.status).toBeLessThan(300);
    expect((await engines()).find((e) => e.id === 'heygen')!.available).toBe(true);
    const other = await p.developer('pro');
    expect((await engines(other.apiKey)).find((e) => e.id === 'heygen')!.available).toBe(false);
  });
});

describe('POST /v1/video/avatar on the GPU engines', () => {
  it('refuses an engine with no model server, saying what to configure', async () => {
    const res = await p.request('/v1/video/avatar', {
      method: 'POST',
      key: dev.apiKey,
      json: { image_url: `${media.url}/face.jpg`, audio_url: `${media.url}/speech.wav`, provider: 'echomimic' },
    });
    const body = (await res.json()) as { error: { code: string; param: string; message: string } };
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'provider_unavailable', param: 'provider' });
    expect(body.error.message).toContain('VIDEO_MODEL_SERVERS=avatar:echomimic=');
  });

  it('renders on a configured one through the model-server contract', async () => {
    const res = await p.request('/v1/video/avatar', {
      method: 'POST',
      key: dev.apiKey,
      json: { image_url: `${media.url}/face.jpg`, audio_url: `${media.url}/speech.wav`, provider: 'sadtalker' },
    });
    const sub = (await res.json()) as VideoJob;
    expect(res.status, JSON.stringify(sub)).toBe(202);
    const { job } = await waitForJob(p, dev.apiKey, sub.id, 60_000);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result).toMatchObject({ provider: 'sadtalker' });
    expect(gpu.calls).toHaveLength(1);
    // The model server could read both inputs from the URLs it was given.
    expect(gpu.calls[0]!.fetched.image_url).toBeGreaterThan(0);
    expect(gpu.calls[0]!.fetched.audio_url).toBeGreaterThan(0);
  });
});
