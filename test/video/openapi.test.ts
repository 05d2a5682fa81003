import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(async () => {
  await p?.close();
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
