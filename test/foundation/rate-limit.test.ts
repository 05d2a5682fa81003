import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api'],
    env: { RATE_LIMITS: 'starter:5,pro:8,scale:1000', RATE_LIMIT_WINDOW_SECONDS: '2' },
  });
});
afterAll(() => p?.close());

describe('rate limiting', () => {
  it('allows the tier limit per window, then 429 with headers, then resets', async () => {
    const { apiKey } = await p.developer('starter');
    // Start at a fresh window so all requests fall into one.
    await waitUntil(() => Date.now() % 2000 < 200, 3000, 5);
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 6; i++) {
      last = await p.request('/v1/me', { key: apiKey });
      statuses.push(last.status);
      if (i === 0) {
        expect(last.headers.get('x-ratelimit-limit')).toBe('5');
        expect(last.headers.get('x-ratelimit-remaining')).toBe('4');
        expect(last.headers.get('ratelimit-policy')).toBe('"default";q=5;w=2');
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const body = (await last!.json()) as { error: { code: string; type: string } };
    expect(body.error.code).toBe('rate_limited');
    expect(body.error.type).toBe('rate_limit_error');
    expect(last!.headers.get('x-ratelimit-limit')).toBe('5');
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
    const retryAfter = Number(last!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    expect(last!.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    await waitUntil(async () => (await p.request('/v1/me', { key: apiKey })).status === 200, 5000, 100);
  });

  it('counts per key and uses the tier of the developer', async () => {
    const a = await p.developer('starter');
    const b = await p.developer('pro');
    await waitUntil(() => Date.now() % 2000 < 200, 3000, 5);
    for (let i = 0; i < 5; i++) await p.request('/v1/me', { key: a.apiKey });
    expect((await p.request('/v1/me', { key: a.apiKey })).status).toBe(429);
    const res = await p.request('/v1/me', { key: b.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('8');
  });
});
