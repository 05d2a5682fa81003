import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

interface CreatedKey {
  id: string;
  key: string;
  name: string;
  expiresAt: string | null;
  message: string;
}
interface KeyPage {
  data: { id: string; name: string; prefix: string; expiresAt: string | null; lastUsedAt: string | null }[];
  nextCursor: string | null;
  hasMore: boolean;
}
interface ErrorBody {
  error: { type: string; code: string; message: string; param: string | null; requestId: string };
}

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(() => p?.close());

async function create(key: string, json: unknown): Promise<Response> {
  return p.request('/v1/keys', { method: 'POST', key, json });
}

describe('POST /v1/keys', () => {
  it('creates a key with defaults; the list shows a prefix, never the raw key', async () => {
    const { apiKey } = await p.developer();
    const res = await create(apiKey, {});
    expect(res.status).toBe(201);
    const created = (await res.json()) as CreatedKey;
    expect(created.name).toBe('Default');
    expect(created.key).toMatch(/^vap_[A-Za-z0-9]{40}$/);
    // Strings or absent, never null (the contract: expiresAt absent when no expiry).
    expect(created).not.toHaveProperty('expiresAt');
    expect(created.message).toMatch(/only once/);

    const list = (await (await p.request('/v1/keys', { key: apiKey })).json()) as KeyPage;
    const item = list.data.find((k) => k.id === created.id);
    expect(item?.prefix).toBe(created.key.slice(0, 10));
    expect(JSON.stringify(list)).not.toContain(created.key);

    // The new key works on its own.
    const me = await p.request('/v1/me', { key: created.key });
    expect(me.status).toBe(200);
  });

  // Regression: both fields are optional, yet a POST without a body was a 400.
  it('creates a "Default" key from a POST without a body, or with an empty JSON body', async () => {
    const { apiKey } = await p.developer();
    const bare = await p.request('/v1/keys', { method: 'POST', key: apiKey });
    expect(bare.status).toBe(201);
    expect(((await bare.json()) as CreatedKey).name).toBe('Default');
    const emptyJson = (path: string) =>
      p.request(path, { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: '' });
    expect((await emptyJson('/v1/keys')).status).toBe(201);
    expect((await emptyJson('/v1/agents')).status).toBe(400);
  });

  it('sets expiresAt from expiresInDays', async () => {
    const { apiKey } = await p.developer();
    const created = (await (await create(apiKey, { name: 'ci', expiresInDays: 30 })).json()) as CreatedKey;
    const days = (Date.parse(created.expiresAt!) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    expect(created.name).toBe('ci');
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: 5 }, 'name'],
    [{ expiresInDays: 0 }, 'expiresInDays'],
    [{ expiresInDays: 366 }, 'expiresInDays'],
    [{ expiresInDays: 1.5 }, 'expiresInDays'],
    [{ expiresInDays: '30' }, 'expiresInDays'],
    [{ unexpected: true }, null],
  ])('rejects %j with 400 naming the field', async (body, param) => {
    const { apiKey } = await p.developer();
    const res = await create(apiKey, body);
    expect(res.status).toBe(400);
    const err = (await res.json()) as ErrorBody;
    expect(err.error.code).toBe('validation_failed');
    expect(err.error.type).toBe('invalid_request_error');
    if (param) expect(err.error.param).toBe(param);
  });

  it('accepts the bounds 1 and 365 days and a 100-char name', async () => {
    const { apiKey } = await p.developer();
    expect((await create(apiKey, { expiresInDays: 1 })).status).toBe(201);
    expect((await create(apiKey, { expiresInDays: 365, name: 'n'.repeat(100) })).status).toBe(201);
  });

  it('creates once for a reused Idempotency-Key (the replay names the key, never shows it) and refuses a different body', async () => {
    const { apiKey } = await p.developer();
    const headers = { 'idempotency-key': 'create-ci-key-1' };
    const first = await p.request('/v1/keys', { method: 'POST', key: apiKey, json: { name: 'ci' }, headers });
    const second = await p.request('/v1/keys', { method: 'POST', key: apiKey, json: { name: 'ci' }, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(409);
    const replay = (await second.json()) as ErrorBody;
    expect(replay.error.code).toBe('idempotency_secret_not_stored');
    expect(replay.error.message).toContain(((await first.json()) as CreatedKey).id);
    const list = (await (await p.request('/v1/keys', { key: apiKey })).json()) as KeyPage;
    expect(list.data.filter((k) => k.name === 'ci')).toHaveLength(1);

    const other = await p.request('/v1/keys', { method: 'POST', key: apiKey, json: { name: 'other' }, headers });
    expect(other.status).toBe(409);
    expect(((await other.json()) as ErrorBody).error.code).toBe('idempotency_key_reused');
  });
});

describe('GET /v1/keys', () => {
  it('pages newest first with a stable cursor', async () => {
    const { apiKey } = await p.developer();
    for (let i = 0; i < 4; i++) await create(apiKey, { name: `k${i}` });
    const page1 = (await (await p.request('/v1/keys?limit=2', { key: apiKey })).json()) as KeyPage;
    expect(page1.data.map((k) => k.name)).toEqual(['k3', 'k2']);
    expect(page1.hasMore).toBe(true);
    // A key created between page requests must not shift the next page.
    await create(apiKey, { name: 'late' });
    const page2 = (await (
      await p.request(`/v1/keys?limit=2&cursor=${page1.nextCursor}`, { key: apiKey })
    ).json()) as KeyPage;
    expect(page2.data.map((k) => k.name)).toEqual(['k1', 'k0']);
    const page3 = (await (
      await p.request(`/v1/keys?limit=2&cursor=${page2.nextCursor}`, { key: apiKey })
    ).json()) as KeyPage;
    expect(page3.data.map((k) => k.name)).toEqual(['Default']);
    expect(page3.hasMore).toBe(false);
    expect(page3).not.toHaveProperty('nextCursor');
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'cursor=not-a-cursor'])('rejects %s with 400', async (q) => {
    const { apiKey } = await p.developer();
    const res = await p.request(`/v1/keys?${q}`, { key: apiKey });
    expect(res.status).toBe(400);
  });
});

describe('DELETE /v1/keys/:id and rotation', () => {
  it('revokes a key immediately', async () => {
    const { apiKey } = await p.developer();
    const extra = (await (await create(apiKey, {})).json()) as CreatedKey;
    expect((await p.request('/v1/me', { key: extra.key })).status).toBe(200);
    const del = await p.request(`/v1/keys/${extra.id}`, { method: 'DELETE', key: apiKey });
    expect(del.status).toBe(204);
    const after = await p.request('/v1/me', { key: extra.key });
    expect(after.status).toBe(401);
    expect(((await after.json()) as ErrorBody).error.code).toBe('revoked_api_key');
    // A second delete finds nothing active.
    expect((await p.request(`/v1/keys/${extra.id}`, { method: 'DELETE', key: apiKey })).status).toBe(404);
  });

  it("treats another developer's key id as not found", async () => {
    const a = await p.developer();
    const b = await p.developer();
    const del = await p.request(`/v1/keys/${a.keyId}`, { method: 'DELETE', key: b.apiKey });
    expect(del.status).toBe(404);
    expect(((await del.json()) as ErrorBody).error.code).toBe('not_found');
    const rot = await p.request(`/v1/keys/${a.keyId}/rotate`, { method: 'POST', key: b.apiKey });
    expect(rot.status).toBe(404);
    expect((await p.request('/v1/me', { key: a.apiKey })).status).toBe(200);
  });

  it('rotates: new key valid, old key answers rotated_api_key', async () => {
    const { apiKey, keyId } = await p.developer();
    const res = await p.request(`/v1/keys/${keyId}/rotate`, { method: 'POST', key: apiKey });
    expect(res.status).toBe(200);
    const rotated = (await res.json()) as { id: string; key: string; name: string; message: string };
    expect(rotated.id).not.toBe(keyId);
    expect(rotated.name).toBe('Default');
    const old = await p.request('/v1/me', { key: apiKey });
    expect(old.status).toBe(401);
    expect(((await old.json()) as ErrorBody).error.code).toBe('rotated_api_key');
    expect((await p.request('/v1/me', { key: rotated.key })).status).toBe(200);
  });

  it('is atomic under concurrent use: every request sees exactly one valid key, and one rotation wins', async () => {
    const { apiKey, keyId } = await p.developer('scale');
    const useOld = Array.from({ length: 40 }, () => p.request('/v1/me', { key: apiKey }));
    const rotations = [1, 2, 3].map(() => p.request(`/v1/keys/${keyId}/rotate`, { method: 'POST', key: apiKey }));
    const results = await Promise.all([...useOld, ...rotations]);
    const rotationStatuses = results.slice(40).map((r) => r.status);
    // The rotating requests authenticate with the old key too, so a rotation that runs after the winner
    // fails either authentication (401) or the lookup (404). Exactly one succeeds.
    expect(rotationStatuses.filter((s) => s === 200)).toHaveLength(1);
    expect(rotationStatuses.every((s) => s === 200 || s === 401 || s === 404)).toBe(true);
    for (const r of results.slice(0, 40)) expect([200, 401]).toContain(r.status);
    const winner = (await results[40 + rotationStatuses.indexOf(200)]!.json()) as { key: string };
    expect((await p.request('/v1/me', { key: winner.key })).status).toBe(200);
    expect((await p.request('/v1/me', { key: apiKey })).status).toBe(401);
    const list = (await (await p.request('/v1/keys', { key: winner.key })).json()) as KeyPage;
    expect(list.data).toHaveLength(1);
  });
});
