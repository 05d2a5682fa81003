import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalyzeSections, VideoJob } from '../../shared/contracts/video.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { probeUrl, TEST_ENV, waitForJob } from './helpers.ts';
import { startMediaServer, type LocalServer } from '../../support/doubles/media-server.ts';

let p: TestPlatform;
let media: LocalServer;
let dev: { developerId: string; apiKey: string };

beforeAll(async () => {
  [p, media] = await Promise.all([startTestPlatform({ env: TEST_ENV }), startMediaServer()]);
  dev = await p.developer('pro');
});
afterAll(async () => {
  await p?.close();
  await media?.close();
});

async function submit(type: string, json: unknown): Promise<VideoJob> {
  const res = await p.request(`/v1/video/${type}`, { method: 'POST', key: dev.apiKey, json });
  const body = (await res.json()) as VideoJob;
  expect(res.status, JSON.stringify(body)).toBe(202);
  return body;
}

describe('lipsync (default engine)', () => {
  it('re-syncs a face video to replacement audio, keeping the video length', async () => {
    const sub = await submit('lipsync', { video_url: `${media.url}/talk.mp4`, audio_url: `${media.url}/speech.wav` });
    const { job, progress } = await waitForJob(p, dev.apiKey, sub.id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(progress.length).toBeGreaterThan(1);
    expect(job.result).toMatchObject({ provider: 'default:classical-warp', width: 256, height: 256 });
    expect(job.result!.duration_seconds).toBeCloseTo(2, 0);
    const probe = await probeUrl(job.result!.video_url!);
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
  });
});

describe('dub (BullMQ flow)', () => {
  it('transcribes, translates to Spanish keeping timing, re-voices, re-lipsyncs and muxes', async () => {
    const sub = await submit('dub', { video_url: `${media.url}/speaker.mp4`, target_language: 'es' });
    const { job, progress } = await waitForJob(p, dev.apiKey, sub.id, 120_000);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThanOrEqual(progress[i - 1]!);
    const result = job.result as VideoJob['result'] & { segments: { start: number; end: number; text: string }[] };
    expect(result.segments.length).toBeGreaterThan(0);
    expect(result.target_language).toBe('es');
    const probe = await probeUrl(result.video_url!);
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
    expect(Number(probe.format.duration)).toBeGreaterThan(2);
  });

  it('refuses a language pair that is not installed', async () => {
    const res = await p.request('/v1/video/dub', {
      method: 'POST',
      key: dev.apiKey,
      json: { video_url: `${media.url}/speaker.mp4`, target_language: 'ja' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unsupported_language');
  });
});

describe('analyze (default engine)', () => {
  it('returns transcript, described scenes (faces, OCR text, colour, motion) and embeddings stored in a collection', async () => {
    const col = await p.request('/v1/collections', { method: 'POST', key: dev.apiKey, json: { name: 'video notes' } });
    expect(col.status).toBe(201);
    const collectionId = ((await col.json()) as { id: string }).id;
    const sub = await submit('analyze', {
      video_url: `${media.url}/scenes.mp4`,
      tasks: ['transcribe', 'scenes', 'embed'],
      collectionId,
    });
    const { job } = await waitForJob(p, dev.apiKey, sub.id, 90_000);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    const r = job.result as VideoJob['result'] & AnalyzeSections;
    expect(r.transcript!.segments.length).toBeGreaterThan(0);
    expect(r.scenes!.length).toBe(2);
    expect(r.scenes![0]!.face_count).toBe(1);
    expect(r.scenes![1]!.face_count).toBe(0);
    expect(r.scenes![1]!.ocr_text).toMatch(/OPEN/);
    expect(r.scenes![1]!.dominant_color).toMatch(/^#f/);
    expect(r.embeddings!.chunks.length).toBeGreaterThan(0);
    expect(r.embeddings!.chunks[0]!.embedding).toHaveLength(r.embeddings!.dimensions);
    expect(r.embeddings!.collection_id).toBe(collectionId);
    const { rows } = await p.infra.db.query('select count(*)::int as n from rag_chunks where collection_id = $1', [
      collectionId,
    ]);
    expect(rows[0].n).toBeGreaterThan(0);
  });
});
