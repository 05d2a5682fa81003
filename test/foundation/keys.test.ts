import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(() => p?.close());

describe('keys', () => {
  it('creates a key with defaults and lists it without the raw key', async () => {
    const { apiKey } = await p.developer();
    const res = await p.request('/v1/keys', { method: 'POST', key: apiKey, json: {} });
    expect(res.status).toBe(201);
    const created = (await res.json()) as {
      id: string;
      key: string;
      name: string;
      expiresAt: string | null;
      message: string;
    };
    expect(created.name).toBe('Default');
    expect(created.key).toMatch(/^vap_[A-Za-z0-9]{40}$/);
    expect(created.expiresAt).toBeNull();
    expect(created.message).toMatch(/only once/);

    const list = (await (await p.request('/v1/keys', { key: apiKey })).json()) as {
      data: { id: string; prefix: string }[];
    };
    expect(list.data.map((k) => k.id)).toContain(created.id);
    expect(JSON.stringify(list)).not.toContain(created.key);
    expect(list.data[0]!.prefix).toBe(created.key.slice(0, 10));
  });
});
