import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(async () => {
  await p?.close();
});

describe('Idempotency-Key on video submissions', () => {
  it('replays the first 202 for the same key and body, and refuses the key with another body', async () => {
    const dev = await p.developer();
    const post = (prompt: string) =>
      p.request('/v1/video/generate', {
        method: 'POST',
        key: dev.apiKey,
        headers: { 'idempotency-key': 'vid-1' },
        json: { prompt, duration_seconds: 1, width: 256, height: 256 },
      });
    const a = await post('same');
    const b = await post('same');
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(((await b.json()) as { id: string }).id).toBe(((await a.json()) as { id: string }).id);
    const { rows } = await p.infra.db.query('select count(*)::int as n from video_jobs where owner_id = $1', [
      dev.developerId,
    ]);
    expect(rows[0].n).toBe(1);
    expect((await post('different')).status).toBe(409);
  });
});

describe('video routes in the OpenAPI document', () => {
  it('documents every video endpoint with its body schema', async () => {
    const res = await p.request('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    for (const t of ['generate', 'avatar', 'lipsync', 'dub', 'analyze']) {
      expect(doc.paths[`/v1/video/${t}`]?.post?.requestBody, t).toBeTruthy();
    }
    expect(doc.paths['/v1/video/{jobId}']?.get).toBeTruthy();
    expect(doc.paths['/v1/webhooks/secret']?.get).toBeTruthy();
  });
});
