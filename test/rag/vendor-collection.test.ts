import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCohereDouble } from '../../support/doubles/cohere.ts';
import type { HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { startOpenAiDouble } from '../../support/doubles/openai.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { call, type ErrorBody, type SearchItem } from './helpers.ts';

/** A bag-of-letters embedding: texts sharing words get similar vectors, so ranking is checkable. */
function letterVector(text: string, dim: number): number[] {
  const v = new Array<number>(dim).fill(0);
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    let h = 0;
    for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) % dim;
    v[h]! += 1;
  }
  return v;
}

let p: TestPlatform;
let openai: HttpDouble;
let cohere: HttpDouble;
/** What the embedding vendors received, per request. */
const seen = () =>
  [...openai.requests, ...cohere.requests].map((r) => ({
    path: r.path,
    auth: r.headers.authorization,
    inputType: (JSON.parse(r.body.toString('utf8')) as Record<string, unknown>).input_type,
  }));
const forget = () => {
  openai.requests.length = 0;
  cohere.requests.length = 0;
};

beforeAll(async () => {
  openai = await startOpenAiDouble({ prefix: '/openai/v1', keys: ['sk-caller'], vector: letterVector });
  cohere = await startCohereDouble({ prefix: '/cohere', key: 'platform-cohere-key', vector: letterVector });
  p = await startTestPlatform({
    roles: ['api'],
    env: {
      OPENAI_BASE_URL: `${openai.url}/openai/v1`,
      COHERE_BASE_URL: `${cohere.url}/cohere`,
      COHERE_API_KEY: 'platform-cohere-key',
    },
  });
});
afterAll(async () => {
  await p?.close();
  await Promise.all([openai?.close(), cohere?.close()]);
});

describe('collections on vendor embedders', () => {
  it("embeds with the caller's OpenAI key (not metered) into 1536-d vectors and searches them", async () => {
    const { apiKey } = await p.developer();
    const col = await call<{ id: string; embeddingDimension: number; embeddingModel: string }>(
      p,
      apiKey,
      'POST',
      '/v1/collections',
      { name: 'openai kb', embeddingProvider: 'openai' },
    );
    expect(col.body).toMatchObject({ embeddingDimension: 1536, embeddingModel: 'text-embedding-3-small' });
    const headers = { 'x-provider-key-openai': 'sk-caller' };
    forget();
    const ing = await p.request(`/v1/collections/${col.body.id}/ingest`, {
      method: 'POST',
      key: apiKey,
      headers,
      json: {
        content:
          'Apples and pears grow in orchards on the hills behind the old farm.\n\nRockets launch satellites into orbit.',
        chunkSize: 100,
        chunkOverlap: 0,
      },
    });
    expect(ing.status).toBe(201);
    expect(ing.headers.get('x-provider-used')).toBe('openai');
    expect(ing.headers.get('x-usage-bypassed')).toBe('true');
    expect(((await ing.json()) as { chunksCreated: number }).chunksCreated).toBe(2);
    const s = await p.request(`/v1/collections/${col.body.id}/search`, {
      method: 'POST',
      key: apiKey,
      headers,
      json: { query: 'rockets orbit satellites', threshold: 0 },
    });
    expect(s.status).toBe(200);
    const results = ((await s.json()) as { results: SearchItem[] }).results;
    expect(results[0]!.content).toBe('Rockets launch satellites into orbit.');
    expect(seen().map((r) => r.auth)).toEqual(['Bearer sk-caller', 'Bearer sk-caller']);
    const { rows } = await p.infra.db.query('select distinct dimension from rag_chunks where collection_id = $1', [
      col.body.id,
    ]);
    expect(rows).toEqual([{ dimension: 1536 }]);
  });

  it('uses the platform key when the caller has none, with query/document input types', async () => {
    const { apiKey } = await p.developer();
    const col = await call<{ id: string }>(p, apiKey, 'POST', '/v1/collections', {
      name: 'cohere kb',
      embeddingProvider: 'cohere',
    });
    forget();
    const ing = await p.request(`/v1/collections/${col.body.id}/ingest`, {
      method: 'POST',
      key: apiKey,
      json: { content: 'Glaciers carve valleys over thousands of years.' },
    });
    expect(ing.status).toBe(201);
    expect(ing.headers.get('x-usage-bypassed')).not.toBe('true');
    const hits = await call<{ results: SearchItem[] }>(p, apiKey, 'POST', `/v1/collections/${col.body.id}/search`, {
      query: 'glaciers valleys',
      threshold: 0,
    });
    expect(hits.body.results).toHaveLength(1);
    expect(seen()).toEqual([
      { path: '/cohere/v2/embed', auth: 'Bearer platform-cohere-key', inputType: 'search_document' },
      { path: '/cohere/v2/embed', auth: 'Bearer platform-cohere-key', inputType: 'search_query' },
    ]);
  });

  it('turns a rejected vendor key into a 400 naming the provider, and stores nothing', async () => {
    const { apiKey } = await p.developer();
    const col = await call<{ id: string }>(p, apiKey, 'POST', '/v1/collections', {
      name: 'bad key',
      embeddingProvider: 'openai',
    });
    openai.failNext(401);
    const res = await p.request(`/v1/collections/${col.body.id}/ingest`, {
      method: 'POST',
      key: apiKey,
      headers: { 'x-provider-key-openai': 'sk-wrong' },
      json: { content: 'anything' },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorBody;
    expect(body.error).toMatchObject({ code: 'provider_unavailable', param: 'provider' });
    const { rows } = await p.infra.db.query('select count(*)::int as n from rag_documents where collection_id = $1', [
      col.body.id,
    ]);
    expect(rows[0].n).toBe(0);
    const ledger = await p.infra.db.query(
      `select l.operation, l.status, l.billable from credit_ledger l
        join api_keys k on k.developer_id = l.developer_id where k.prefix = $1`,
      [apiKey.slice(0, 10)],
    );
    expect(ledger.rows).toEqual([{ operation: 'ingest', status: 'refunded', billable: false }]);
  });
});
