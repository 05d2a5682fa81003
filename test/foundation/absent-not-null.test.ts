import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue 34: one convention across the API, the contract's own ("expiresAt absent when no expiry"): a field with
 * no value is absent, never null. Our agent extensions answered null; the webhook-secret route answered snake_case
 * `created_at` on a camelCase API and created the secret on a GET.
 */
let p: TestPlatform;
let key: string;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'], env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  key = (await p.developer()).apiKey;
});
afterAll(() => p?.close());

const UNSET_EXTENSIONS = ['turnTaking', 'audio', 'voicemail', 'callTools', 'maxDurationSeconds', 'maxCredits'];

describe('agent extensions without a value', () => {
  it('are absent on create, read, list and versions; a value set shows, cleared with null it is absent again', async () => {
    const created = await p.request('/v1/agents', { method: 'POST', key, json: { name: 'plain' } });
    expect(created.status).toBe(201);
    const agent = (await created.json()) as Record<string, unknown> & { id: string };
    const read = (await (await p.request(`/v1/agents/${agent.id}`, { key })).json()) as Record<string, unknown>;
    const list = (await (await p.request('/v1/agents', { key })).json()) as { data: Record<string, unknown>[] };
    const versions = (await (await p.request(`/v1/agents/${agent.id}/versions`, { key })).json()) as {
      data: { config: Record<string, unknown> }[];
    };
    for (const view of [agent, read, list.data.find((a) => a.id === agent.id)!, versions.data[0]!.config]) {
      for (const f of UNSET_EXTENSIONS) expect(view, f).not.toHaveProperty(f);
      // The contract's own "or null" fields keep null.
      expect(view).toMatchObject({ ttsModel: null, collectionId: null });
    }

    const set = await p.request(`/v1/agents/${agent.id}`, {
      method: 'PUT',
      key,
      json: { maxDurationSeconds: 300, maxCredits: 50 },
    });
    expect(await set.json()).toMatchObject({ maxDurationSeconds: 300, maxCredits: 50 });
    const cleared = await p.request(`/v1/agents/${agent.id}`, {
      method: 'PUT',
      key,
      json: { maxDurationSeconds: null, maxCredits: null },
    });
    expect(cleared.status).toBe(200);
    const after = (await cleared.json()) as Record<string, unknown>;
    expect(after).not.toHaveProperty('maxDurationSeconds');
    expect(after).not.toHaveProperty('maxCredits');
  });
});

describe('GET /v1/webhooks/secret', () => {
  const url = 'http://127.0.0.1:9/hooks/video';
  const path = `/v1/webhooks/secret?url=${encodeURIComponent(url)}`;

  it('creates nothing: an address with no secret is a 404 saying how to make one, and stays without', async () => {
    const res = await p.request(path, { key });
    expect(res.status).toBe(404);
    const err = ((await res.json()) as { error: { code: string; message: string; param: string } }).error;
    expect(err).toMatchObject({ code: 'webhook_secret_not_found', param: 'url' });
    expect(err.message).toContain('POST /v1/webhooks/secret');
    expect(err.message).not.toContain('127.0.0.1');
    expect((await p.request(path, { key })).status).toBe(404);
  });

  it('POST creates it (201) with camelCase createdAt, then returns the same one (200); GET reads it', async () => {
    const first = await p.request('/v1/webhooks/secret', { method: 'POST', key, json: { url } });
    expect(first.status).toBe(201);
    const made = (await first.json()) as Record<string, unknown>;
    expect(made).toMatchObject({ url, secret: expect.stringMatching(/^whsec_/), disabled: false });
    expect(Date.parse(made.createdAt as string)).not.toBeNaN();
    expect(made).not.toHaveProperty('created_at');

    const again = await p.request('/v1/webhooks/secret', { method: 'POST', key, json: { url } });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(made);
    const read = await p.request(path, { key });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(made);
  });

  it('POST refuses an address a job could not use either (not http(s))', async () => {
    const res = await p.request('/v1/webhooks/secret', { method: 'POST', key, json: { url: 'ftp://example.com/x' } });
    expect(res.status).toBe(400);
  });
});
