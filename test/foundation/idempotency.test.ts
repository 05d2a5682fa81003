import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(() => p?.close());

describe('Idempotency-Key on a streamed response', () => {
  // Regression: a replay of a streamed audio response used to answer 200 with an empty body.
  it('says the response cannot be replayed instead of sending an empty body', async () => {
    const { apiKey } = await p.developer();
    const headers = { 'idempotency-key': 'speech-1' };
    const json = { text: 'Idempotent speech.', format: 'wav' };
    const first = await p.request('/v1/synthesize', { method: 'POST', key: apiKey, json, headers });
    expect(first.status).toBe(200);
    expect((await first.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    const second = await p.request('/v1/synthesize', { method: 'POST', key: apiKey, json, headers });
    expect(second.status).toBe(409);
    const body = (await second.json()) as { error: { code: string } };
    expect(body.error.code).toBe('idempotency_response_unavailable');
  });
});
