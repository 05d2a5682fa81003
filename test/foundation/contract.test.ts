import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { tone, wav } from '../../support/doubles/audio.ts';

interface Operation {
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, { format?: string }> } }> };
}

let p: TestPlatform;
let key: string;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  key = (await p.developer()).apiKey;
});
afterAll(() => p?.close());

describe('contract fixes (../shared/spec/API.md)', () => {
  // Regression: job reads answered X-Provider-Used: none.
  it('a transcription job read names the provider that took the job', async () => {
    const form = new FormData();
    form.set('file', new Blob([wav(tone(16_000, 0.5), 16_000)], { type: 'audio/wav' }), 'a.wav');
    const submitted = await p.request('/v1/transcribe/async', { method: 'POST', key, body: form });
    expect(submitted.status).toBe(202);
    const provider = submitted.headers.get('x-provider-used');
    expect(provider).not.toBe('none');
    const { id } = (await submitted.json()) as { id: string };
    const read = await p.request(`/v1/transcribe/${id}`, { key });
    expect(read.status).toBe(200);
    expect(read.headers.get('x-provider-used')).toBe(provider);
  });

  it('a video job read names the provider of the job', async () => {
    const submitted = await p.request('/v1/video/generate', {
      method: 'POST',
      key,
      json: { prompt: 'title', duration_seconds: 1, width: 256, height: 256 },
    });
    expect(submitted.status).toBe(202);
    const job = (await submitted.json()) as { id: string; provider: string };
    const read = await p.request(`/v1/video/${job.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.headers.get('x-provider-used')).toBe(job.provider);
    expect(job.provider).not.toBe('none');
  });

  // Regression: the three upload routes had no request body in /openapi.json.
  it('/openapi.json describes the multipart bodies of the upload routes and the tool-signing-secret routes', async () => {
    const doc = (await (await p.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    for (const path of ['/v1/transcribe', '/v1/transcribe/async', '/v1/audio/transcriptions']) {
      const multipart = doc.paths[path]?.post?.requestBody?.content['multipart/form-data'];
      expect(multipart?.schema.properties?.file?.format, path).toBe('binary');
    }
    expect(
      doc.paths['/v1/transcribe']?.post?.requestBody?.content['application/json']?.schema.properties,
    ).toHaveProperty('audioUrl');
    const openai = doc.paths['/v1/audio/transcriptions']?.post?.requestBody?.content['multipart/form-data'];
    expect(openai?.schema.properties).toHaveProperty('model');
    expect(doc.paths['/v1/agents/{id}/tool-signing-secret']?.get).toBeTruthy();
    expect(doc.paths['/v1/agents/{id}/tool-signing-secret/rotate']?.post).toBeTruthy();
  });
});
