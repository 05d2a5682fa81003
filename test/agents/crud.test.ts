import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
let dev: { apiKey: string; developerId: string };
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'], env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  dev = await p.developer();
});
afterAll(() => p?.close());

type Json = Record<string, unknown>;
async function create(json: unknown, key = dev.apiKey) {
  const res = await p.request('/v1/agents', { method: 'POST', key, json });
  return { status: res.status, body: (await res.json()) as Json };
}

describe('agents CRUD', () => {
  // With no LLM configured anywhere, the local reply engine is the default (the contract's openai-kind default
  // once a key exists: test/agents/local-reply.test.ts).
  it('creates with every default of the contract', async () => {
    const { status, body } = await create({ name: 'Helper' });
    expect(status).toBe(201);
    expect(body).toMatchObject({
      name: 'Helper',
      description: '',
      systemPrompt: '',
      firstMessage: '',
      voiceId: 'default',
      ttsProvider: 'default',
      ttsModel: null,
      llmProvider: 'local',
      llmModel: 'knowledge-lookup',
      collectionId: null,
      styleProfile: null,
      language: 'en',
      temperature: 0.7,
      maxTokens: 1024,
      status: 'active',
      metadata: {},
      tools: [],
    });
    expect(body.id).toMatch(/^agt_/);
    expect(body.toolSigningSecret).toMatch(/^whsec_/);
    expect(new Date(body.createdAt as string).toISOString()).toBe(body.createdAt);
    expect(body.updatedAt).toBe(body.createdAt);
  });

  it('stores every field as given and echoes it', async () => {
    const full = {
      id: 'support-bot.v1',
      name: 'Support',
      description: 'd'.repeat(1000),
      systemPrompt: 's'.repeat(10_000),
      firstMessage: 'f'.repeat(1000),
      voiceId: 'Rachel',
      ttsProvider: 'elevenlabs',
      ttsModel: 'eleven_turbo_v2',
      llmProvider: 'anthropic',
      llmModel: 'claude-x',
      styleProfile: { speed: 1.2, pitch: 0.9, stability: 0.5, similarityBoost: 0.7, style: 0.1, emotion: 'warm' },
      language: 'pt-BR',
      temperature: 2,
      maxTokens: 16384,
      metadata: { team: 'cx', n: 3, nested: { a: [1] } },
      tools: [
        {
          name: 'lookup_order',
          description: 'Looks up an order',
          parameters: { type: 'object', properties: { id: { type: 'string' } } },
          url: 'https://tools.example.com/order',
        },
      ],
    };
    const { status, body } = await create(full);
    expect(status).toBe(201);
    const { tools, ...rest } = full;
    expect(body).toMatchObject(rest);
    expect(body.tools).toEqual([{ ...tools[0], timeoutMs: 5000 }]);
    const got = await (await p.request('/v1/agents/support-bot.v1', { key: dev.apiKey })).json();
    const { toolSigningSecret: _secret, ...shown } = body;
    expect(got).toEqual(shown);
  });

  it('defaults llmModel per provider', async () => {
    expect((await create({ name: 'g', llmProvider: 'groq' })).body.llmModel).toBe('llama-3.1-8b-instant');
    expect((await create({ name: 'a', llmProvider: 'anthropic' })).body.llmModel).toMatch(/^claude/);
  });

  it('409 on a duplicate client id, per developer only', async () => {
    expect((await create({ id: 'dup-1', name: 'x' })).status).toBe(201);
    const again = await create({ id: 'dup-1', name: 'y' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: { code: 'already_exists', param: 'id', type: 'conflict_error' } });
    const other = await p.developer();
    expect((await create({ id: 'dup-1', name: 'z' }, other.apiKey)).status).toBe(201);
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'n'.repeat(101) }, 'name'],
    [{ name: 'x', id: '' }, 'id'],
    [{ name: 'x', id: 'i'.repeat(61) }, 'id'],
    [{ name: 'x', description: 'd'.repeat(1001) }, 'description'],
    [{ name: 'x', systemPrompt: 's'.repeat(10_001) }, 'systemPrompt'],
    [{ name: 'x', firstMessage: 'f'.repeat(1001) }, 'firstMessage'],
    [{ name: 'x', ttsProvider: 'acme' }, 'ttsProvider'],
    [{ name: 'x', llmProvider: 'mistral' }, 'llmProvider'],
    [{ name: 'x', temperature: -0.1 }, 'temperature'],
    [{ name: 'x', temperature: 2.01 }, 'temperature'],
    [{ name: 'x', temperature: '0.5' }, 'temperature'],
    [{ name: 'x', maxTokens: 0 }, 'maxTokens'],
    [{ name: 'x', maxTokens: 16385 }, 'maxTokens'],
    [{ name: 'x', maxTokens: 1.5 }, 'maxTokens'],
    [{ name: 'x', language: 'english!' }, 'language'],
    [{ name: 'x', styleProfile: { speed: 2.5 } }, 'styleProfile.speed'],
    [{ name: 'x', styleProfile: { unknown: 1 } }, 'styleProfile'],
    [{ name: 'x', styleProfile: 'fast' }, 'styleProfile'],
    [{ name: 'x', metadata: [] }, 'metadata'],
    [{ name: 'x', status: 'archived' }, 'status'],
    [{ name: 'x', bogus: 1 }, null],
    [{ name: 'x', tools: [{ name: 'search_knowledge', description: 'd', url: 'https://a.example' }] }, 'tools.0.name'],
    [{ name: 'x', tools: [{ name: 't', description: 'd', url: 'ftp://a.example' }] }, 'tools.0.url'],
    [
      { name: 'x', tools: [{ name: 't', description: 'd', url: 'https://a.example', timeoutMs: 50 }] },
      'tools.0.timeoutMs',
    ],
    [
      { name: 'x', tools: [{ name: 't', description: 'd', url: 'https://a.example', parameters: { type: 'string' } }] },
      'tools.0.parameters',
    ],
    [{ name: 'x', tools: [{ name: 't', description: 'd', url: 'http://example.com/t' }] }, 'tools.0.url'],
  ])('400 for bad input #%#', async (json, param) => {
    const { status, body } = await create(json);
    expect(status).toBe(400);
    const err = body.error as Json;
    expect(err.type).toBe('invalid_request_error');
    if (param) expect(String(err.param)).toContain(param.split('.')[0]);
  });

  it('a tool whose parameters do not compile as a JSON Schema is 400 on create, update and provision', async () => {
    const tool = (name: string, parameters: Json) => ({ name, description: 'd', url: 'https://a.example', parameters });
    const good = tool('good', { type: 'object', properties: { a: { type: 'string' } } });
    const bad: Json[] = [
      { type: 'object', properties: { a: { type: 'nonsense' } } },
      { type: 'object', required: 'a' },
      { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
      { type: 'object', properties: { a: { type: 'string', pattern: '(' } } },
      // Nested repetition: could backtrack exponentially on model output inside our processes.
      { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } },
      { type: 'object', $schema: 'http://json-schema.org/draft-04/schema#' },
    ];
    for (const parameters of bad) {
      const { status, body } = await create({ name: 'x', tools: [good, tool('lookup', parameters)] });
      expect(status).toBe(400);
      const err = body.error as Json;
      expect(err).toMatchObject({
        code: 'validation_failed',
        type: 'invalid_request_error',
        param: 'tools.1.parameters',
      });
      expect(String(err.message)).toContain('tool "lookup"');
      expect(String(err.message)).toContain('not a usable JSON Schema');
    }
    const typeErr = (await create({ name: 'x', tools: [tool('t', bad[0]!)] })).body.error as Json;
    expect(typeErr.message).toMatch(/properties\.a\.type must be equal to one of the allowed values/);

    const { body: a } = await create({ name: 'Schemas', tools: [good] });
    const put = await p.request(`/v1/agents/${a.id}`, {
      method: 'PUT',
      key: dev.apiKey,
      json: { tools: [tool('broken', bad[0]!)] },
    });
    expect(put.status).toBe(400);
    expect(((await put.json()) as { error: Json }).error).toMatchObject({ param: 'tools.0.parameters' });
    const kept = (await (await p.request(`/v1/agents/${a.id}`, { key: dev.apiKey })).json()) as Json;
    expect(kept.tools).toEqual([expect.objectContaining({ name: 'good' })]);

    const prov = await p.request('/v1/agents/provision', {
      method: 'POST',
      key: dev.apiKey,
      json: { name: 'x', collection: { name: 'c' }, tools: [tool('broken', bad[0]!)] },
    });
    expect(prov.status).toBe(400);
    expect(((await prov.json()) as { error: Json }).error).toMatchObject({ param: 'tools.0.parameters' });

    // Schemas the vendors document still pass: 2020-12 by default, draft-07 when declared, formats, $defs.
    for (const parameters of [
      { type: 'object', properties: { when: { type: 'string', format: 'date' } }, additionalProperties: false },
      { type: 'object', $schema: 'http://json-schema.org/draft-07/schema#', definitions: { x: { type: 'string' } } },
      {
        type: 'object',
        properties: { a: { $ref: '#/$defs/x' } },
        $defs: { x: { type: 'string', pattern: '^[A-Z]\\d+$' } },
      },
    ]) {
      expect((await create({ name: 'ok', tools: [tool('t', parameters)] })).status).toBe(201);
    }
  });

  it('accepts every enum value and the bounds themselves', async () => {
    const tts = [
      'default',
      'elevenlabs',
      'cartesia',
      'deepgram',
      'openai',
      'azure',
      'google',
      'polly',
      'playht',
      'rime',
      'lmnt',
      'hume',
      'replicate',
    ];
    for (const t of tts) expect((await create({ name: 't', ttsProvider: t })).status).toBe(201);
    for (const l of ['openai', 'anthropic', 'groq'])
      expect((await create({ name: 'l', llmProvider: l })).status).toBe(201);
    const edge = await create({ id: 'i'.repeat(60), name: 'n'.repeat(100), temperature: 0, maxTokens: 1 });
    expect(edge.status).toBe(201);
  });

  it('collectionId must be the developer’s own collection', async () => {
    const other = await p.developer();
    const col = await p.request('/v1/collections', { method: 'POST', key: other.apiKey, json: { name: 'theirs' } });
    expect(col.status).toBe(201);
    const theirs = ((await col.json()) as Json).id as string;
    const res = await create({ name: 'x', collectionId: theirs });
    expect(res.status).toBe(404);
    expect((res.body.error as Json).param).toBe('collectionId');
    const mine = (await (
      await p.request('/v1/collections', { method: 'POST', key: dev.apiKey, json: { name: 'mine' } })
    ).json()) as Json;
    const attached = await create({ name: 'x', collectionId: mine.id });
    expect(attached.body.collectionId).toBe(mine.id);
    // Deleting the collection detaches it; the agent stays usable.
    expect((await p.request(`/v1/collections/${mine.id}`, { method: 'DELETE', key: dev.apiKey })).status).toBe(204);
    const after = (await (await p.request(`/v1/agents/${attached.body.id}`, { key: dev.apiKey })).json()) as Json;
    expect(after.collectionId).toBeNull();
  });

  it('PUT changes only the fields given', async () => {
    const { body: a } = await create({ name: 'Orig', description: 'keep', temperature: 0.2 });
    const res = await p.request(`/v1/agents/${a.id}`, {
      method: 'PUT',
      key: dev.apiKey,
      json: { name: 'New', styleProfile: { speed: 1.5 } },
    });
    expect(res.status).toBe(200);
    const b = (await res.json()) as Json;
    expect(b).toMatchObject({ name: 'New', description: 'keep', temperature: 0.2, styleProfile: { speed: 1.5 } });
    expect(Date.parse(b.updatedAt as string)).toBeGreaterThanOrEqual(Date.parse(a.updatedAt as string));
    const cleared = (await (
      await p.request(`/v1/agents/${a.id}`, {
        method: 'PUT',
        key: dev.apiKey,
        json: { styleProfile: null, ttsModel: null },
      })
    ).json()) as Json;
    expect(cleared.styleProfile).toBeNull();
    const switched = (await (
      await p.request(`/v1/agents/${a.id}`, { method: 'PUT', key: dev.apiKey, json: { llmProvider: 'groq' } })
    ).json()) as Json;
    expect(switched.llmModel).toBe('llama-3.1-8b-instant');
    const bad = await p.request(`/v1/agents/${a.id}`, { method: 'PUT', key: dev.apiKey, json: { temperature: 3 } });
    expect(bad.status).toBe(400);
    const missing = await p.request('/v1/agents/nope', { method: 'PUT', key: dev.apiKey, json: { name: 'x' } });
    expect(missing.status).toBe(404);
  });

  // Regression: PUT answered 400 to the very body GET returned (id, createdAt… are not settable fields).
  it('PUT accepts the body GET returned, ignoring read-only fields', async () => {
    const { body: a } = await create({ name: 'Roundtrip', description: 'before' });
    const got = (await (await p.request(`/v1/agents/${a.id}`, { key: dev.apiKey })).json()) as Json;
    const res = await p.request(`/v1/agents/${a.id}`, {
      method: 'PUT',
      key: dev.apiKey,
      json: { ...got, id: 'ignored', createdAt: '2000-01-01T00:00:00Z', toolSigningSecret: 'x', description: 'after' },
    });
    expect(res.status).toBe(200);
    const b = (await res.json()) as Json;
    expect(b).toMatchObject({ id: a.id, createdAt: a.createdAt, description: 'after', name: 'Roundtrip' });
    const revealed = await p.request(`/v1/agents/${a.id}/tool-signing-secret`, { key: dev.apiKey });
    expect(((await revealed.json()) as Json).toolSigningSecret).toBe(a.toolSigningSecret);
    const unknown = await p.request(`/v1/agents/${a.id}`, { method: 'PUT', key: dev.apiKey, json: { nope: 1 } });
    expect(unknown.status).toBe(400);
  });

  // Regression: toolSigningSecret was in every agent response, lists included.
  it('shows the tool-signing secret at creation and on the reveal and rotate routes only', async () => {
    const { body: a } = await create({ name: 'Signer' });
    expect(a.toolSigningSecret).toMatch(/^whsec_/);
    const got = (await (await p.request(`/v1/agents/${a.id}`, { key: dev.apiKey })).json()) as Json;
    expect(got).not.toHaveProperty('toolSigningSecret');
    const list = await (await p.request('/v1/agents?limit=100', { key: dev.apiKey })).text();
    expect(list).not.toContain('toolSigningSecret');
    const put = await p.request(`/v1/agents/${a.id}`, { method: 'PUT', key: dev.apiKey, json: { name: 'S2' } });
    expect(await put.json()).not.toHaveProperty('toolSigningSecret');

    const revealed = await p.request(`/v1/agents/${a.id}/tool-signing-secret`, { key: dev.apiKey });
    expect(await revealed.json()).toEqual({ agentId: a.id, toolSigningSecret: a.toolSigningSecret });
    const rotated = await p.request(`/v1/agents/${a.id}/tool-signing-secret/rotate`, {
      method: 'POST',
      key: dev.apiKey,
    });
    expect(rotated.status).toBe(200);
    const fresh = ((await rotated.json()) as Json).toolSigningSecret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(a.toolSigningSecret);
    const after = await p.request(`/v1/agents/${a.id}/tool-signing-secret`, { key: dev.apiKey });
    expect(((await after.json()) as Json).toolSigningSecret).toBe(fresh);
  });

  it('DELETE archives: 204, GET shows status archived, lists exclude it, PUT status active restores', async () => {
    const { body: a } = await create({ name: 'Temp' });
    const del = await p.request(`/v1/agents/${a.id}`, { method: 'DELETE', key: dev.apiKey });
    expect(del.status).toBe(204);
    const got = (await (await p.request(`/v1/agents/${a.id}`, { key: dev.apiKey })).json()) as Json;
    expect(got.status).toBe('archived');
    const ids = await allIds(dev.apiKey);
    expect(ids).not.toContain(a.id);
    const chat = await p.request(`/v1/agents/${a.id}/chat`, {
      method: 'POST',
      key: dev.apiKey,
      json: { message: 'hi' },
    });
    expect(chat.status).toBe(409);
    expect((await p.request(`/v1/agents/${a.id}`, { method: 'DELETE', key: dev.apiKey })).status).toBe(204);
    await p.request(`/v1/agents/${a.id}`, { method: 'PUT', key: dev.apiKey, json: { status: 'active' } });
    expect(await allIds(dev.apiKey)).toContain(a.id);
    expect((await p.request('/v1/agents/never', { method: 'DELETE', key: dev.apiKey })).status).toBe(404);
  });

  it('chat without any LLM key configured is 400 provider_unavailable naming what to do', async () => {
    const { body: a } = await create({ name: 'Keyless', llmProvider: 'anthropic' });
    const res = await p.request(`/v1/agents/${a.id}/chat`, {
      method: 'POST',
      key: dev.apiKey,
      json: { message: 'hi' },
    });
    expect(res.status).toBe(400);
    const err = ((await res.json()) as { error: Json }).error;
    expect(err).toMatchObject({ code: 'provider_unavailable', param: 'provider' });
    expect(String(err.message)).toContain('X-Provider-Key-Anthropic');
  });

  it('lists page newest first with a stable cursor and only the owner’s agents', async () => {
    const d = await p.developer();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create({ name: `a${i}` }, d.apiKey)).body.id as string);
    const page1 = (await (await p.request('/v1/agents?limit=2', { key: d.apiKey })).json()) as {
      data: Json[];
      nextCursor: string;
      hasMore: boolean;
    };
    expect(page1.data.map((a) => a.id)).toEqual([made[4], made[3]]);
    expect(page1.hasMore).toBe(true);
    await create({ name: 'late' }, d.apiKey);
    const page2 = (await (
      await p.request(`/v1/agents?limit=2&cursor=${page1.nextCursor}`, { key: d.apiKey })
    ).json()) as { data: Json[] };
    expect(page2.data.map((a) => a.id)).toEqual([made[2], made[1]]);
    expect((await allIds(d.apiKey)).length).toBe(6);
    expect((await p.request('/v1/agents?cursor=garbage', { key: d.apiKey })).status).toBe(400);
    expect((await p.request('/v1/agents?limit=0', { key: d.apiKey })).status).toBe(400);
  });

  it('another developer’s agent is 404 on every route', async () => {
    const { body: a } = await create({ name: 'Private' });
    const other = await p.developer();
    for (const [method, path, json] of [
      ['GET', `/v1/agents/${a.id}`, undefined],
      ['PUT', `/v1/agents/${a.id}`, { name: 'hijack' }],
      ['DELETE', `/v1/agents/${a.id}`, undefined],
      ['POST', `/v1/agents/${a.id}/chat`, { message: 'hi' }],
      ['POST', `/v1/agents/${a.id}/speak`, { text: 'hi' }],
      ['POST', `/v1/agents/${a.id}/sync`, {}],
      ['POST', `/v1/agents/${a.id}/instances`, {}],
      ['GET', `/v1/agents/${a.id}/instances`, undefined],
      ['GET', `/v1/agents/${a.id}/tool-signing-secret`, undefined],
      ['POST', `/v1/agents/${a.id}/tool-signing-secret/rotate`, undefined],
    ] as const) {
      const res = await p.request(path, { method, key: other.apiKey, json });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(((await res.json()) as { error: Json }).error.code).toBe('not_found');
    }
    expect(await allIds(other.apiKey)).not.toContain(a.id);
    const still = (await (await p.request(`/v1/agents/${a.id}`, { key: dev.apiKey })).json()) as Json;
    expect(still).toMatchObject({ name: 'Private', status: 'active' });
  });

  it('instances: create, list, get, delete, bounds, phone uniqueness', async () => {
    const { body: a } = await create({ name: 'Inst' });
    const base = `/v1/agents/${a.id}/instances`;
    const mk = (json: unknown) => p.request(base, { method: 'POST', key: dev.apiKey, json });
    const r1 = await mk({
      name: 'Ada',
      phoneNumber: '+14155550123',
      context: { firstName: 'Ada', vip: true, visits: 3 },
    });
    expect(r1.status).toBe(201);
    const i1 = (await r1.json()) as Json;
    expect(i1).toMatchObject({
      agentId: a.id,
      name: 'Ada',
      phoneNumber: '+14155550123',
      context: { firstName: 'Ada', vip: true, visits: 3 },
    });
    expect(i1.id).toMatch(/^ins_/);
    expect((await mk({ phoneNumber: '+14155550123' })).status).toBe(409);
    expect((await mk({ phoneNumber: '555-0123' })).status).toBe(400);
    expect((await mk({ context: { 'bad key!': 1 } })).status).toBe(400);
    expect((await mk({ context: { k: { nested: 1 } } })).status).toBe(400);
    const i2 = (await (await mk({})).json()) as Json;
    const list = (await (await p.request(base, { key: dev.apiKey })).json()) as { data: Json[] };
    expect(list.data.map((i) => i.id)).toEqual([i2.id, i1.id]);
    expect((await p.request(`${base}/${i1.id}`, { key: dev.apiKey })).status).toBe(200);
    expect((await p.request(`${base}/${i1.id}`, { method: 'DELETE', key: dev.apiKey })).status).toBe(204);
    expect((await p.request(`${base}/${i1.id}`, { key: dev.apiKey })).status).toBe(404);
  });
});

async function allIds(key: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `?limit=100&cursor=${cursor}` : '?limit=100';
    const page = (await (await p.request(`/v1/agents${q}`, { key })).json()) as {
      data: Json[];
      nextCursor: string | null;
    };
    ids.push(...page.data.map((a) => a.id as string));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}
