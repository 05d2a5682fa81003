import { createServer, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoJob } from '../../shared/contracts/video.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { TEST_ENV, waitForJob } from './helpers.ts';
import { listen, makeMedia, startMediaServer, type LocalServer } from './media-server.ts';

interface Call {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One local server speaking the wire formats of HeyGen (upload + v2 generate + v1 status), Sync Labs (v2
 * generate), Luma (dream-machine v1 generations) and our model-server contract, recording every request. Jobs
 * report "processing" on the first poll and "completed" on the next; outputs are a real small MP4.
 */
async function startVendorDouble(mp4: Buffer): Promise<LocalServer & { calls: Call[] }> {
  const calls: Call[] = [];
  const polls = new Map<string, number>();
  let url = '';
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      calls.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks) });
      const poll = (id: string) => {
        const n = (polls.get(id) ?? 0) + 1;
        polls.set(id, n);
        return n >= 2;
      };
      if (path === '/files/out.mp4') return res.writeHead(200, { 'content-type': 'video/mp4' }).end(mp4);
      // HeyGen
      if (path === '/v1/talking_photo') return json(res, 200, { code: 100, data: { talking_photo_id: 'tp_1' } });
      if (path === '/v2/video/generate') return json(res, 200, { error: null, data: { video_id: 'hv_1' } });
      if (path.startsWith('/v1/video_status.get')) {
        const done = poll('hv_1');
        return json(res, 200, {
          code: 100,
          data: { status: done ? 'completed' : 'processing', video_url: done ? `${url}/files/out.mp4` : null },
        });
      }
      // Sync Labs
      if (path === '/v2/generate' && req.method === 'POST') return json(res, 201, { id: 'sg_1', status: 'PENDING' });
      if (path === '/v2/generate/sg_1') {
        const done = poll('sg_1');
        return json(res, 200, {
          id: 'sg_1',
          status: done ? 'COMPLETED' : 'PROCESSING',
          outputUrl: done ? `${url}/files/out.mp4` : null,
        });
      }
      // Luma
      if (path === '/dream-machine/v1/generations') return json(res, 201, { id: 'lu_1', state: 'queued' });
      if (path === '/dream-machine/v1/generations/lu_1') {
        const done = poll('lu_1');
        return json(res, 200, {
          id: 'lu_1',
          state: done ? 'completed' : 'dreaming',
          assets: done ? { video: `${url}/files/out.mp4` } : null,
        });
      }
      // Replicate
      if (path === '/v1/models/sync/lipsync-2/predictions') return json(res, 201, { id: 'rp_1', status: 'starting' });
      if (path === '/v1/predictions/rp_1') {
        const done = poll('rp_1');
        return json(res, 200, {
          id: 'rp_1',
          status: done ? 'succeeded' : 'processing',
          output: done ? `${url}/files/out.mp4` : null,
        });
      }
      // Model server: analysis
      if (path === '/v1/analyze') {
        return json(res, 200, {
          scenes: [
            {
              start: 0,
              end: 2,
              description: 'a person talking',
              ocr_text: '',
              face_count: 1,
              motion: 0.1,
              dominant_color: '#aa8866',
            },
          ],
        });
      }
      // Runway
      if (path === '/v1/text_to_video') return json(res, 200, { id: 'rw_1' });
      if (path === '/v1/tasks/rw_1') {
        const done = poll('rw_1');
        return json(res, 200, {
          id: 'rw_1',
          status: done ? 'SUCCEEDED' : 'RUNNING',
          output: done ? [`${url}/files/out.mp4`] : undefined,
        });
      }
      // Twelve Labs v1.3
      if (path.startsWith('/v1.3/indexes?')) return json(res, 200, { data: [] });
      if (path === '/v1.3/indexes') return json(res, 201, { _id: 'ix_1' });
      if (path === '/v1.3/tasks') return json(res, 201, { _id: 'tk_1', video_id: 'vd_1' });
      if (path === '/v1.3/tasks/tk_1') {
        const done = poll('tk_1');
        return json(res, 200, { _id: 'tk_1', status: done ? 'ready' : 'indexing', video_id: 'vd_1' });
      }
      if (path === '/v1.3/summarize') {
        return json(res, 200, {
          id: 'sm_1',
          summarize_type: 'chapter',
          chapters: [
            {
              chapter_number: 0,
              start_sec: 0,
              end_sec: 2,
              chapter_title: 'Greeting',
              chapter_summary: 'A woman says hello.',
            },
          ],
        });
      }
      if (path === '/v1.3/indexes/ix_1/videos/vd_1?transcription=true') {
        return json(res, 200, { _id: 'vd_1', transcription: [{ start: 0, end: 1.5, value: 'Hello there' }] });
      }
      // Model server
      if (path === '/health') return json(res, 200, { status: 'ok', kind: 'lipsync', model: 'double' });
      if (path === '/v1/lipsync') return res.writeHead(200, { 'content-type': 'video/mp4' }).end(mp4);
      json(res, 404, { error: { message: 'no such route' } });
    });
  });
  url = await listen(server);
  return { url, calls, close: () => new Promise((r) => server.close(() => r())) };
}

let p: TestPlatform;
let media: LocalServer;
let vendor: LocalServer & { calls: Call[] };
let dev: { developerId: string; apiKey: string };

beforeAll(async () => {
  const files = makeMedia();
  vendor = await startVendorDouble(files['/talk.mp4']!.body);
  media = await startMediaServer(files);
  p = await startTestPlatform({
    env: {
      ...TEST_ENV,
      HEYGEN_BASE_URL: vendor.url,
      SYNCLABS_BASE_URL: vendor.url,
      TWELVELABS_BASE_URL: vendor.url,
      RUNWAY_BASE_URL: vendor.url,
      REPLICATE_BASE_URL: vendor.url,
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
    const call = vendor.calls.find((c) => c.path === '/v1/models/sync/lipsync-2/predictions')!;
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
