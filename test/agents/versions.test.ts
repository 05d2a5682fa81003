import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/** Agent versions (issue 21): every configuration change is a numbered, immutable snapshot. */
let p: TestPlatform;
let dev: { apiKey: string; developerId: string };
let other: { apiKey: string; developerId: string };
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  dev = await p.developer();
  other = await p.developer();
});
afterAll(() => p?.close());

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
async function call(path: string, init: { method?: string; json?: unknown; key?: string } = {}) {
  const res = await p.request(path, { key: dev.apiKey, ...init });
  return { status: res.status, body: (await res.json()) as Json };
}

describe('agent versions', () => {
  it('creation is version 1 with the full configuration', async () => {
    const a = await call('/v1/agents', {
      method: 'POST',
      json: {
        name: 'Front desk',
        systemPrompt: 'You answer questions about opening hours.',
        firstMessage: 'Hello, front desk.',
        temperature: 0.3,
        maxTokens: 200,
        turnTaking: { endpointingMs: 700 },
        voicemail: { action: 'hangup' },
        maxDurationSeconds: 120,
      },
    });
    expect(a.status).toBe(201);
    expect(a.body.version).toBe(1);
    const v = await call(`/v1/agents/${a.body.id}/versions/1`);
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({
      agentId: a.body.id,
      version: 1,
      config: {
        name: 'Front desk',
        systemPrompt: 'You answer questions about opening hours.',
        firstMessage: 'Hello, front desk.',
        llmProvider: a.body.llmProvider,
        llmModel: a.body.llmModel,
        temperature: 0.3,
        maxTokens: 200,
        turnTaking: { endpointingMs: 700 },
        voicemail: { action: 'hangup' },
        maxDurationSeconds: 120,
        tools: [],
        collectionId: null,
      },
    });
    // Not configuration: the secret, status and timestamps are not in a version.
    for (const k of ['toolSigningSecret', 'status', 'id', 'createdAt', 'updatedAt', 'version'])
      expect(v.body.config).not.toHaveProperty(k);
  });

  it('each update that changes the configuration makes the next version; the old ones stay as they were', async () => {
    const a = await call('/v1/agents', { method: 'POST', json: { name: 'Versioned', systemPrompt: 'one' } });
    const id = a.body.id as string;
    const u2 = await call(`/v1/agents/${id}`, { method: 'PUT', json: { systemPrompt: 'two' } });
    expect(u2.body.version).toBe(2);
    const u3 = await call(`/v1/agents/${id}`, { method: 'PUT', json: { firstMessage: 'Hi!', temperature: 1.1 } });
    expect(u3.body.version).toBe(3);
    // The GET body can be sent back (version is read-only); no change, no version.
    const same = await call(`/v1/agents/${id}`, { method: 'PUT', json: u3.body });
    expect(same.status).toBe(200);
    expect(same.body.version).toBe(3);
    // Archiving and restoring change no configuration.
    expect((await p.request(`/v1/agents/${id}`, { method: 'DELETE', key: dev.apiKey })).status).toBeLessThan(300);
    expect((await call(`/v1/agents/${id}`, { method: 'PUT', json: { status: 'active' } })).body.version).toBe(3);

    const list = await call(`/v1/agents/${id}/versions?limit=2`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((v: Json) => v.version)).toEqual([3, 2]);
    expect(list.body.hasMore).toBe(true);
    const rest = await call(`/v1/agents/${id}/versions?limit=2&cursor=${list.body.nextCursor}`);
    expect(rest.body.data.map((v: Json) => v.version)).toEqual([1]);
    expect(rest.body.hasMore).toBe(false);

    const v1 = await call(`/v1/agents/${id}/versions/1`);
    expect(v1.body.config).toMatchObject({ systemPrompt: 'one', firstMessage: '', temperature: 0.7 });
    const v3 = await call(`/v1/agents/${id}/versions/3`);
    expect(v3.body.config).toMatchObject({ systemPrompt: 'two', firstMessage: 'Hi!', temperature: 1.1 });
    expect((await call(`/v1/agents/${id}/versions/4`)).status).toBe(404);
    expect((await call(`/v1/agents/${id}/versions/0`)).status).toBe(400);
  });

  it('versions are immutable: the API has no way to change one and the database refuses', async () => {
    const a = await call('/v1/agents', { method: 'POST', json: { name: 'Frozen', systemPrompt: 'as created' } });
    const id = a.body.id as string;
    expect((await call(`/v1/agents/${id}/versions/1`, { method: 'PUT', json: { config: {} } })).status).toBe(404);
    expect((await p.request(`/v1/agents/${id}/versions/1`, { method: 'DELETE', key: dev.apiKey })).status).toBe(404);
    await expect(p.infra.db.query(`update agent_versions set config = '{}' where agent_id = $1`, [id])).rejects.toThrow(
      /immutable/,
    );
    expect((await call(`/v1/agents/${id}/versions/1`)).body.config.systemPrompt).toBe('as created');
  });

  it("another developer's agent and versions read as missing", async () => {
    const a = await call('/v1/agents', { method: 'POST', json: { name: 'Mine', systemPrompt: 'secret sauce' } });
    const id = a.body.id as string;
    const list = await call(`/v1/agents/${id}/versions`, { key: other.apiKey });
    expect(list.status).toBe(404);
    expect(list.body.error.code).toBe('not_found');
    expect((await call(`/v1/agents/${id}/versions/1`, { key: other.apiKey })).status).toBe(404);
    // The same client id used by the other developer is a different agent with its own history.
    await call('/v1/agents', { method: 'POST', key: other.apiKey, json: { id: 'shared-id', name: 'Theirs' } });
    await call('/v1/agents', { method: 'POST', json: { id: 'shared-id', name: 'Ours' } });
    await call('/v1/agents/shared-id', { method: 'PUT', json: { name: 'Ours, renamed' } });
    const ours = await call('/v1/agents/shared-id/versions');
    const theirs = await call('/v1/agents/shared-id/versions', { key: other.apiKey });
    expect(ours.body.data.map((v: Json) => v.config.name)).toEqual(['Ours, renamed', 'Ours']);
    expect(theirs.body.data.map((v: Json) => v.config.name)).toEqual(['Theirs']);
  });

  it('a bad cursor is a 400, not a 500', async () => {
    const a = await call('/v1/agents', { method: 'POST', json: { name: 'Cursor' } });
    const r = await call(`/v1/agents/${a.body.id}/versions?cursor=nonsense`);
    expect(r.status).toBe(400);
  });
});
