import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { PortalBrowser } from '../../support/helpers/portal.ts';

const LIMIT = 20;
let p: TestPlatform;
let b: PortalBrowser;
let developerId: string;

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'], env: { RATE_LIMITS: `starter:${LIMIT},pro:600,scale:3000` } });
  b = new PortalBrowser(p);
  developerId = await b.signIn('+16465550100', 'Mirror');
}, 120_000);

afterAll(async () => {
  await p?.close();
});

describe('/portal/api/v1 mirror', () => {
  it('serves the /v1 routes with the same bodies and errors: agents, a direct-session token, validation', async () => {
    const created = await b.fetch('/portal/api/v1/agents', {
      method: 'POST',
      json: { name: 'Front desk', llmModel: 'gpt-4o-mini' },
    });
    expect(created.status).toBe(201);
    const agent = (await created.json()) as { id: string; name: string };
    const viaPortal = await (await b.fetch(`/portal/api/v1/agents/${agent.id}`)).json();
    const apiKey = (await mintKey(p.infra.db, developerId, 'cmp')).key;
    const viaKey = await (await p.request(`/v1/agents/${agent.id}`, { key: apiKey })).json();
    expect(viaPortal).toEqual(viaKey);

    const token = await b.fetch('/portal/api/v1/sessions/direct', { method: 'POST', json: { agentId: agent.id } });
    expect(token.status).toBe(200);
    expect(await token.json()).toMatchObject({ agentId: agent.id, token: expect.any(String) });

    const invalid = await b.fetch('/portal/api/v1/agents', { method: 'POST', json: { name: '' } });
    expect(invalid.status).toBe(400);
    const err = ((await invalid.json()) as { error: { type: string; param: string } }).error;
    expect(err.type).toBe('invalid_request_error');
  });

  it('honours an Idempotency-Key like /v1 (one key created; the replay names it, never shows the raw key)', async () => {
    const headers = { 'idempotency-key': `portal-${Date.now()}` };
    const first = await b.fetch('/portal/api/v1/keys', { method: 'POST', json: { name: 'once' }, headers });
    const again = await b.fetch('/portal/api/v1/keys', { method: 'POST', json: { name: 'once' }, headers });
    expect(first.status).toBe(201);
    const created = (await first.json()) as { id: string; key: string };
    expect(again.status).toBe(409);
    const text = await again.text();
    expect((JSON.parse(text) as { error: { code: string } }).error.code).toBe('idempotency_secret_not_stored');
    expect(text).toContain(created.id);
    expect(text).not.toContain(created.key);
  });

  it('rate-limits writes per developer, apart from the budgets of the developer’s API keys and from page views', async () => {
    // Fixed windows: within 2 × LIMIT + 1 requests the limit is reached even if one window boundary passes. The
    // limiter runs before validation, so invalid writes count (and create nothing).
    let limited: Response | null = null;
    for (let i = 0; i < 2 * LIMIT + 1 && !limited; i++) {
      const res = await b.fetch('/portal/api/v1/agents', { method: 'POST', json: { name: '' } });
      if (res.status === 429) limited = res;
      else expect(res.status).toBe(400);
    }
    expect(limited).not.toBeNull();
    expect(limited!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await limited!.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    // Page views (reads) have a bucket of their own, far above the tier's limit: browsing goes on.
    for (let i = 0; i < LIMIT + 1; i++) {
      const res = await b.fetch('/portal/api/v1/keys');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('1200');
    }
    const key = await mintKey(p.infra.db, developerId, 'own budget');
    expect((await p.request('/v1/keys', { key: key.key })).status).toBe(200);
  });
});
