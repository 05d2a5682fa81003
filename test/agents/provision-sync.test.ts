import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { startVapiDouble } from './doubles/vapi-double.ts';

type Json = Record<string, unknown>;
let p: TestPlatform;
let vapi: Awaited<ReturnType<typeof startVapiDouble>>;
let dev: { apiKey: string; developerId: string };

beforeAll(async () => {
  vapi = await startVapiDouble('vapi-platform-key');
  p = await startTestPlatform({
    roles: ['api'],
    env: { VAPI_BASE_URL: vapi.url, VAPI_API_KEY: 'vapi-platform-key' },
  });
  dev = await p.developer('pro');
});
afterAll(async () => {
  await p?.close();
  await vapi?.close();
});

async function count(table: string, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await p.infra.db.query(`select count(*)::int as n from ${table} where ${where}`, params);
  return rows[0].n as number;
}

describe('POST /v1/agents/provision', () => {
  it('creates the agent, its collection and the initial content, searchable at once', async () => {
    const res = await p.request('/v1/agents/provision', {
      method: 'POST',
      key: dev.apiKey,
      json: {
        id: 'clinic-bot',
        name: 'Clinic',
        systemPrompt: 'You answer questions about the clinic.',
        ttsProvider: 'default',
        llmProvider: 'groq',
        collection: { name: 'Clinic FAQ', description: 'Opening hours and services' },
        initialContent: [
          { content: 'The clinic opens at 8am and closes at 6pm on weekdays.', contentType: 'text' },
          {
            content: 'Speaker 1: Do you offer dental cleanings? Speaker 2: Yes, every Tuesday.',
            contentType: 'transcript',
          },
        ],
      },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { agent: Json; collection: Json; ingestResults: Json[] };
    expect(body.agent).toMatchObject({
      id: 'clinic-bot',
      name: 'Clinic',
      llmProvider: 'groq',
      collectionId: body.collection.id,
      status: 'active',
    });
    expect(body.collection).toMatchObject({ name: 'Clinic FAQ', description: 'Opening hours and services' });
    expect(body.ingestResults).toHaveLength(2);
    for (const r of body.ingestResults) {
      expect(r.documentId).toMatch(/^doc_/);
      expect(r.chunksCreated).toBeGreaterThan(0);
      expect(r.tokensUsed).toBeGreaterThan(0);
    }
    const search = await p.request(`/v1/collections/${body.collection.id}/search`, {
      method: 'POST',
      key: dev.apiKey,
      json: { query: 'when does the clinic open', threshold: 0 },
    });
    const hits = ((await search.json()) as { results: Json[] }).results;
    expect(String(hits[0]?.content)).toContain('8am');
  });

  it('rolls back completely when any ingest fails: no agent, no collection, no documents', async () => {
    const d = await p.developer('pro');
    const before = {
      col: await count('rag_collections', 'developer_id = $1', [d.developerId]),
      docs: await count('rag_documents', 'developer_id = $1', [d.developerId]),
    };
    const res = await p.request('/v1/agents/provision', {
      method: 'POST',
      key: d.apiKey,
      json: {
        id: 'doomed',
        name: 'Doomed',
        collection: { name: 'Doomed KB' },
        // The first document ingests fine inside the transaction; the second has no text and fails.
        initialContent: [{ content: 'A perfectly good first document about llamas.' }, { content: '   \n\t  ' }],
      },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: Json }).error.code).toBe('validation_failed');
    expect((await p.request('/v1/agents/doomed', { key: d.apiKey })).status).toBe(404);
    expect(await count('agents', 'developer_id = $1', [d.developerId])).toBe(0);
    expect(await count('rag_collections', 'developer_id = $1', [d.developerId])).toBe(before.col);
    expect(await count('rag_documents', 'developer_id = $1', [d.developerId])).toBe(before.docs);
    const list = (await (await p.request('/v1/collections', { key: d.apiKey })).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(0);
    // Regression: the first document's ingest credits were charged although its transaction rolled back.
    const usage = (await (await p.request('/v1/usage', { key: d.apiKey })).json()) as { credits: { used: number } };
    expect(usage.credits.used).toBe(0);
  });

  it('a duplicate agent id is 409 and leaves no collection behind', async () => {
    const d = await p.developer('pro');
    await p.request('/v1/agents', { method: 'POST', key: d.apiKey, json: { id: 'taken', name: 'First' } });
    const res = await p.request('/v1/agents/provision', {
      method: 'POST',
      key: d.apiKey,
      json: { id: 'taken', name: 'Second', collection: { name: 'KB' }, initialContent: [{ content: 'hello world' }] },
    });
    expect(res.status).toBe(409);
    expect(await count('rag_collections', 'developer_id = $1', [d.developerId])).toBe(0);
  });

  it.each([
    [{ name: 'x' }, 'collection'],
    [{ name: 'x', collection: { name: '' } }, 'collection.name'],
    [{ name: 'x', collection: { name: 'c', description: 'd'.repeat(501) } }, 'collection.description'],
    [
      { name: 'x', collection: { name: 'c' }, initialContent: [{ content: 'a', contentType: 'video' }] },
      'initialContent.0.contentType',
    ],
    [{ name: 'x', collection: { name: 'c' }, initialContent: [{ content: '' }] }, 'initialContent.0.content'],
    [{ name: 'x', collection: { name: 'c' }, collectionId: 'col_1' }, 'collectionId'],
    [{ name: 'x', collection: { name: 'c' }, temperature: 5 }, 'temperature'],
  ])('400 for a bad provision body #%#', async (json, param) => {
    const res = await p.request('/v1/agents/provision', { method: 'POST', key: dev.apiKey, json });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: Json }).error.param).toBe(param);
  });
});

describe('POST /v1/agents/:id/sync (Vapi)', () => {
  it('creates the assistant on first sync and updates the same one afterwards', async () => {
    const a = (await (
      await p.request('/v1/agents', {
        method: 'POST',
        key: dev.apiKey,
        json: {
          name: 'Receptionist',
          systemPrompt: 'Answer calls politely.',
          firstMessage: 'Hello, how can I help?',
          ttsProvider: 'elevenlabs',
          voiceId: 'voice-123',
          llmProvider: 'openai',
          llmModel: 'gpt-4o',
          temperature: 0.4,
          maxTokens: 250,
          language: 'en-US',
        },
      })
    ).json()) as Json;

    const first = await p.request(`/v1/agents/${a.id}/sync`, { method: 'POST', key: dev.apiKey, json: {} });
    expect(first.status).toBe(200);
    const s1 = (await first.json()) as Json;
    expect(s1).toMatchObject({ synced: true, provider: 'vapi' });
    const created = vapi.assistants.get(s1.externalAgentId as string)!;
    expect(created).toMatchObject({
      name: 'Receptionist',
      firstMessage: 'Hello, how can I help?',
      model: {
        provider: 'openai',
        model: 'gpt-4o',
        temperature: 0.4,
        maxTokens: 250,
        messages: [{ role: 'system', content: 'Answer calls politely.' }],
      },
      voice: { provider: '11labs', voiceId: 'voice-123' },
      transcriber: { provider: 'deepgram', language: 'en' },
      metadata: { platformAgentId: a.id },
    });

    await p.request(`/v1/agents/${a.id}`, { method: 'PUT', key: dev.apiKey, json: { firstMessage: 'Hi there!' } });
    const posts = vapi.requests.filter((r) => r.method === 'POST').length;
    const second = (await (
      await p.request(`/v1/agents/${a.id}/sync`, { method: 'POST', key: dev.apiKey })
    ).json()) as Json;
    expect(second.externalAgentId).toBe(s1.externalAgentId);
    expect(vapi.requests.filter((r) => r.method === 'POST').length).toBe(posts);
    expect(vapi.requests.at(-1)).toMatchObject({ method: 'PATCH', path: `/assistant/${s1.externalAgentId}` });
    expect(vapi.assistants.get(s1.externalAgentId as string)!.firstMessage).toBe('Hi there!');

    // Deleted on Vapi's side: the next sync creates a new assistant and stores its id.
    vapi.assistants.clear();
    const third = (await (
      await p.request(`/v1/agents/${a.id}/sync`, { method: 'POST', key: dev.apiKey, json: {} })
    ).json()) as Json;
    expect(third.externalAgentId).not.toBe(s1.externalAgentId);
    expect(vapi.assistants.has(third.externalAgentId as string)).toBe(true);
  });

  it('400 for an unknown sync provider; archived agents cannot sync', async () => {
    const a = (await (
      await p.request('/v1/agents', { method: 'POST', key: dev.apiKey, json: { name: 'S' } })
    ).json()) as Json;
    const bad = await p.request(`/v1/agents/${a.id}/sync`, {
      method: 'POST',
      key: dev.apiKey,
      json: { provider: 'nope' },
    });
    expect(bad.status).toBe(400);
    await p.request(`/v1/agents/${a.id}`, { method: 'DELETE', key: dev.apiKey });
    expect((await p.request(`/v1/agents/${a.id}/sync`, { method: 'POST', key: dev.apiKey, json: {} })).status).toBe(
      409,
    );
  });
});
