import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { call, createCollection, ingest, search, type ErrorBody } from './helpers.ts';

let p: TestPlatform;
let key: string;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  key = (await p.developer('scale')).apiKey;
});
afterAll(() => p?.close());

const BEES =
  'Honeybee foragers perform a waggle dance on the comb to tell nestmates where flowers are. ' +
  'The angle of the dance encodes the direction relative to the sun.';
const VOLCANO =
  'Explosive volcanic eruptions happen when sticky, silica-rich magma traps gas until the pressure shatters it ' +
  'into ash and pumice.';

describe('collections CRUD', () => {
  it('creates, reads and lists a collection with its embedder', async () => {
    const r = await call<Record<string, unknown>>(p, key, 'POST', '/v1/collections', {
      name: 'Support articles',
      description: 'Help centre',
      metadata: { team: 'support', tier: 2 },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'Support articles',
      description: 'Help centre',
      metadata: { team: 'support', tier: 2 },
      embeddingProvider: 'default',
      embeddingModel: 'glove-sif-100d-v1',
      embeddingDimension: 100,
    });
    expect(r.body.id).toMatch(/^col_/);
    expect(new Date(r.body.createdAt as string).toISOString()).toBe(r.body.createdAt);
    const got = await call(p, key, 'GET', `/v1/collections/${r.body.id as string}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
  });

  it('defaults description to empty and metadata to an empty object', async () => {
    const r = await call(p, key, 'POST', '/v1/collections', { name: 'x' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'x', description: '', metadata: {} });
  });

  it('enforces every bound of the create body', async () => {
    const bad: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'n'.repeat(101) }, 'name'],
      [{ name: 42 }, 'name'],
      [{ name: 'ok', description: 'd'.repeat(501) }, 'description'],
      [{ name: 'ok', metadata: 'not an object' }, 'metadata'],
      [{ name: 'ok', metadata: [1, 2] }, 'metadata'],
      [{ name: 'ok', embeddingProvider: 'nonesuch' }, 'embeddingProvider'],
    ];
    for (const [body, param] of bad) {
      const r = await call<ErrorBody>(p, key, 'POST', '/v1/collections', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
      expect(r.body.error.param).toBe(param);
    }
    const edge = await call(p, key, 'POST', '/v1/collections', {
      name: 'n'.repeat(100),
      description: 'd'.repeat(500),
    });
    expect(edge.status).toBe(201);
  });

  it('fixes a vendor embedder at creation; using it needs a key', async () => {
    const r = await call<{ id: string; embeddingDimension: number }>(p, key, 'POST', '/v1/collections', {
      name: 'vendor',
      embeddingProvider: 'cohere',
    });
    expect(r.status).toBe(201);
    expect(r.body.embeddingDimension).toBe(1024);
    const s = await call<ErrorBody>(p, key, 'POST', `/v1/collections/${r.body.id}/search`, { query: 'x' });
    expect(s.status).toBe(400);
    expect(s.body.error.code).toBe('provider_unavailable');
  });

  it('lists newest first with cursor pagination', async () => {
    const dev = await p.developer();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await createCollection(p, dev.apiKey, `c${i}`));
    const page1 = await call<{ data: { id: string }[]; nextCursor: string; hasMore: boolean }>(
      p,
      dev.apiKey,
      'GET',
      '/v1/collections?limit=3',
    );
    expect(page1.body.data.map((c) => c.id)).toEqual(ids.slice(2).reverse());
    expect(page1.body.hasMore).toBe(true);
    const page2 = await call<{ data: { id: string }[]; nextCursor: string | null; hasMore: boolean }>(
      p,
      dev.apiKey,
      'GET',
      `/v1/collections?limit=3&cursor=${page1.body.nextCursor}`,
    );
    expect(page2.body.data.map((c) => c.id)).toEqual(ids.slice(0, 2).reverse());
    expect(page2.body).toMatchObject({ hasMore: false });
    // The contract types nextCursor as a string: absent on the last page, never null.
    expect(page2.body).not.toHaveProperty('nextCursor');
    expect((await call(p, dev.apiKey, 'GET', '/v1/collections?limit=0')).status).toBe(400);
    expect((await call(p, dev.apiKey, 'GET', '/v1/collections?limit=101')).status).toBe(400);
    expect((await call(p, dev.apiKey, 'GET', '/v1/collections?cursor=bogus')).status).toBe(400);
  });

  it('answers 404 in the envelope for unknown ids', async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/collections/col_nope', undefined],
      ['DELETE', '/v1/collections/col_nope', undefined],
      ['POST', '/v1/collections/col_nope/ingest', { content: 'hi' }],
      ['POST', '/v1/collections/col_nope/search', { query: 'hi' }],
      ['DELETE', '/v1/collections/col_nope/documents/doc_nope', undefined],
    ] as const) {
      const r = await call<ErrorBody>(p, key, method, path, body);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error).toMatchObject({ code: 'not_found', type: 'not_found_error' });
    }
  });
});

describe('ingest', () => {
  it('chunks, embeds and reports usage; metadata reaches every chunk', async () => {
    const id = await createCollection(p, key);
    const text = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}. ${BEES}`).join('\n\n');
    const r = await call<{ documentId: string; chunksCreated: number; tokensUsed: number; split: string }>(
      p,
      key,
      'POST',
      `/v1/collections/${id}/ingest`,
      { content: text, chunkSize: 400, chunkOverlap: 100, metadata: { source: 'manual', page: 3 } },
    );
    expect(r.status).toBe(201);
    // The contract's three fields, and how the document was split (extension, issue #33: prose is split by size).
    expect(Object.keys(r.body).sort()).toEqual(['chunksCreated', 'documentId', 'split', 'tokensUsed']);
    expect(r.body.split).toBe('size');
    expect(r.body.documentId).toMatch(/^doc_/);
    expect(r.body.chunksCreated).toBeGreaterThan(5);
    expect(r.body.tokensUsed).toBeGreaterThan(12 * 30);
    expect(r.headers.get('x-provider-used')).toBe('default');
    const results = await search(p, key, id, { query: 'waggle dance direction', limit: 100, threshold: 0 });
    expect(results).toHaveLength(r.body.chunksCreated);
    expect(new Set(results.map((x) => x.chunkIndex)).size).toBe(r.body.chunksCreated);
    for (const x of results) {
      expect(x.documentId).toBe(r.body.documentId);
      expect(x.metadata).toEqual({ source: 'manual', page: 3 });
      expect(x.content.length).toBeLessThanOrEqual(400);
    }
  });

  it('applies defaults: contentType text, chunkSize 1000, chunkOverlap 200', async () => {
    const id = await createCollection(p, key);
    const sentence = 'This sentence has exactly sixty characters in it, more or less. ';
    const out = await ingest(p, key, id, { content: sentence.repeat(50) }); // ~3,200 characters
    expect(out.chunksCreated).toBe(4); // 1000-char chunks advancing ~800 characters each
  });

  it('enforces every bound of the ingest body', async () => {
    const id = await createCollection(p, key);
    const bad: [Record<string, unknown>, string][] = [
      [{ content: 'x', chunkSize: 99 }, 'chunkSize'],
      [{ content: 'x', chunkSize: 4001 }, 'chunkSize'],
      [{ content: 'x', chunkSize: 500.5 }, 'chunkSize'],
      [{ content: 'x', chunkOverlap: -1 }, 'chunkOverlap'],
      [{ content: 'x', chunkOverlap: 501 }, 'chunkOverlap'],
      [{ content: 'x', chunkSize: 100, chunkOverlap: 100 }, 'chunkOverlap'],
      [{ content: 'x', chunkSize: 300, chunkOverlap: 450 }, 'chunkOverlap'],
      [{ content: 'x', contentType: 'pdf' }, 'contentType'],
      [{ content: 'x', metadata: 'no' }, 'metadata'],
      [{ content: 42 }, 'content'],
      [{}, 'content'],
      [{ content: '   \n\n ' }, 'content'],
      [{ contentType: 'audio' }, 'sourceUrl'],
      [{ contentType: 'url' }, 'sourceUrl'],
      [{ contentType: 'url', sourceUrl: 'ftp://example.com/x' }, 'sourceUrl'],
      [{ contentType: 'audio', sourceUrl: 'not a url' }, 'sourceUrl'],
    ];
    for (const [body, param] of bad) {
      const r = await call<ErrorBody>(p, key, 'POST', `/v1/collections/${id}/ingest`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.param, JSON.stringify(body)).toBe(param);
    }
    // Edges that are allowed.
    await ingest(p, key, id, { content: 'Edge.', chunkSize: 100, chunkOverlap: 99 });
    await ingest(p, key, id, { content: 'Edge.', chunkSize: 4000, chunkOverlap: 500 });
    await ingest(p, key, id, { content: 'Edge.', chunkSize: 4000, chunkOverlap: 0, contentType: 'transcript' });
  });

  it('accepts 1 MB of content and answers 413 beyond it', async () => {
    const id = await createCollection(p, key);
    const mb = 1024 * 1024;
    const unit = 'Tides rise and fall twice a day because of the Moon. ';
    const exact = unit.repeat(Math.floor(mb / unit.length)).padEnd(mb, '.');
    expect(Buffer.byteLength(exact)).toBe(mb);
    const started = Date.now();
    const ok = await ingest(p, key, id, { content: exact });
    process.stdout.write(`1 MB ingest through the API: ${ok.chunksCreated} chunks in ${Date.now() - started} ms\n`);
    expect(ok.chunksCreated).toBeGreaterThan(1000);
    const over = await call<ErrorBody>(p, key, 'POST', `/v1/collections/${id}/ingest`, { content: exact + 'x' });
    expect(over.status).toBe(413);
    expect(over.body.error).toMatchObject({ code: 'payload_too_large', param: 'content' });
    // Multi-byte characters count as bytes.
    const wide = await call<ErrorBody>(p, key, 'POST', `/v1/collections/${id}/ingest`, {
      content: 'é'.repeat(mb / 2 + 1),
    });
    expect(wide.status).toBe(413);
  });
});

describe('search', () => {
  let id: string;
  let beesDoc: string;
  let volcanoDoc: string;
  beforeAll(async () => {
    id = await createCollection(p, key);
    beesDoc = (await ingest(p, key, id, { content: BEES, metadata: { topic: 'bees', year: 2020 } })).documentId;
    volcanoDoc = (await ingest(p, key, id, { content: VOLCANO, metadata: { topic: 'geology', year: 2020 } }))
      .documentId;
  });

  it('ranks the relevant chunk first with a score in 0-1', async () => {
    const results = await search(p, key, id, { query: 'How do bees tell each other where the flowers are?' });
    expect(results.length).toBeGreaterThanOrEqual(1);
    expect(results[0]).toMatchObject({ documentId: beesDoc, chunkIndex: 0, content: BEES });
    expect(results[0]!.score).toBeGreaterThanOrEqual(0.7);
    expect(results[0]!.score).toBeLessThanOrEqual(1);
    expect(results[0]!.metadata).toEqual({ topic: 'bees', year: 2020 });
  });

  it('filters by threshold, limit, metadata and omits metadata on request', async () => {
    const all = await search(p, key, id, { query: 'bees and volcanoes', threshold: 0 });
    expect(all.map((r) => r.documentId).sort()).toEqual([beesDoc, volcanoDoc].sort());
    expect(all[0]!.score).toBeGreaterThanOrEqual(all[1]!.score);
    expect(await search(p, key, id, { query: 'bees and volcanoes', threshold: 0, limit: 1 })).toHaveLength(1);
    expect(await search(p, key, id, { query: 'bees and volcanoes', threshold: 1 })).toEqual([]);
    const geology = await search(p, key, id, { query: 'bees', threshold: 0, filter: { topic: 'geology' } });
    expect(geology.map((r) => r.documentId)).toEqual([volcanoDoc]);
    const both = await search(p, key, id, { query: 'bees', threshold: 0, filter: { year: 2020 } });
    expect(both).toHaveLength(2);
    expect(await search(p, key, id, { query: 'bees', threshold: 0, filter: { year: 2021 } })).toEqual([]);
    const bare = await search(p, key, id, { query: 'bees', threshold: 0, includeMetadata: false });
    for (const r of bare) expect(r).not.toHaveProperty('metadata');
  });

  it('enforces every bound of the search body', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{}, 'query'],
      [{ query: '' }, 'query'],
      [{ query: 'q'.repeat(2001) }, 'query'],
      [{ query: 'q', limit: 0 }, 'limit'],
      [{ query: 'q', limit: 101 }, 'limit'],
      [{ query: 'q', limit: 2.5 }, 'limit'],
      [{ query: 'q', threshold: -0.1 }, 'threshold'],
      [{ query: 'q', threshold: 1.1 }, 'threshold'],
      [{ query: 'q', includeMetadata: 'yes' }, 'includeMetadata'],
      [{ query: 'q', filter: { nested: { a: 1 } } }, 'filter.nested'],
    ];
    for (const [body, param] of bad) {
      const r = await call<ErrorBody>(p, key, 'POST', `/v1/collections/${id}/search`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.param, JSON.stringify(body)).toBe(param);
    }
    expect(await search(p, key, id, { query: 'q'.repeat(2000), limit: 100, threshold: 0 })).toBeDefined();
  });

  it('finds names the embedder does not know through full text', async () => {
    const doc = await ingest(p, key, id, { content: 'Error code XQ-4471 means the flux capacitor overheated.' });
    const results = await search(p, key, id, { query: 'XQ-4471', threshold: 0 });
    expect(results[0]!.documentId).toBe(doc.documentId);
  });
});

describe('metering', () => {
  it('charges rag credits: ingest by embedded tokens, search per query; a rejected ingest costs nothing', async () => {
    const dev = await p.developer('scale');
    const id = await createCollection(p, dev.apiKey);
    const out = await ingest(p, dev.apiKey, id, { content: `${BEES}\n\n${VOLCANO}` });
    await search(p, dev.apiKey, id, { query: 'bees' });
    const bad = await call(p, dev.apiKey, 'POST', `/v1/collections/${id}/ingest`, {
      contentType: 'url',
      sourceUrl: 'http://10.1.2.3/x',
    });
    expect(bad.status).toBe(400);
    const { rows } = await p.infra.db.query(
      `select category, operation, units, unit, credits, provider, billable, status from credit_ledger
        where developer_id = $1 order by created_at`,
      [dev.developerId],
    );
    expect(rows).toEqual([
      {
        category: 'rag',
        operation: 'ingest',
        units: out.tokensUsed,
        unit: 'embedded tokens',
        credits: Math.max(1, Math.ceil(out.tokensUsed * 0.02)),
        provider: 'default',
        billable: true,
        status: 'committed',
      },
      {
        category: 'rag',
        operation: 'search',
        units: 1,
        unit: 'queries',
        credits: 1,
        provider: 'default',
        billable: true,
        status: 'committed',
      },
    ]);
  });
});

describe('deletes', () => {
  it('removes a document and its chunks; search never returns them', async () => {
    const id = await createCollection(p, key);
    const keep = await ingest(p, key, id, { content: VOLCANO });
    const gone = await ingest(p, key, id, { content: `${BEES}\n\n${BEES}`, chunkSize: 200, chunkOverlap: 0 });
    const before = await search(p, key, id, { query: 'waggle dance of honeybees', threshold: 0, limit: 100 });
    expect(before.some((r) => r.documentId === gone.documentId)).toBe(true);

    const del = await p.request(`/v1/collections/${id}/documents/${gone.documentId}`, { method: 'DELETE', key });
    expect(del.status).toBe(204);
    const after = await search(p, key, id, { query: 'waggle dance of honeybees', threshold: 0, limit: 100 });
    expect(after.map((r) => r.documentId)).toEqual([keep.documentId]);
    const again = await call<ErrorBody>(p, key, 'DELETE', `/v1/collections/${id}/documents/${gone.documentId}`);
    expect(again.status).toBe(404);
    const { rows } = await p.infra.db.query('select count(*)::int as n from rag_chunks where document_id = $1', [
      gone.documentId,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it('removes a collection with its documents and chunks', async () => {
    const id = await createCollection(p, key);
    const doc = await ingest(p, key, id, { content: BEES });
    const del = await p.request(`/v1/collections/${id}`, { method: 'DELETE', key });
    expect(del.status).toBe(204);
    expect((await call(p, key, 'GET', `/v1/collections/${id}`)).status).toBe(404);
    expect((await call(p, key, 'POST', `/v1/collections/${id}/search`, { query: 'bees' })).status).toBe(404);
    const { rows } = await p.infra.db.query(
      `select (select count(*) from rag_documents where collection_id = $1)::int as docs,
              (select count(*) from rag_chunks where collection_id = $1 or document_id = $2)::int as chunks`,
      [id, doc.documentId],
    );
    expect(rows[0]).toEqual({ docs: 0, chunks: 0 });
  });

  it('a document id from another collection is 404 and that document survives', async () => {
    const a = await createCollection(p, key);
    const b = await createCollection(p, key);
    const doc = await ingest(p, key, a, { content: BEES });
    const r = await call<ErrorBody>(p, key, 'DELETE', `/v1/collections/${b}/documents/${doc.documentId}`);
    expect(r.status).toBe(404);
    expect(await search(p, key, a, { query: 'bees', threshold: 0 })).toHaveLength(1);
  });
});

describe('tenant isolation', () => {
  it("answers 404 for another developer's collection on every route and never leaks its chunks", async () => {
    const owner = await p.developer();
    const other = await p.developer();
    const id = await createCollection(p, owner.apiKey);
    const doc = await ingest(p, owner.apiKey, id, { content: BEES });
    for (const [method, path, body] of [
      ['GET', `/v1/collections/${id}`, undefined],
      ['DELETE', `/v1/collections/${id}`, undefined],
      ['POST', `/v1/collections/${id}/ingest`, { content: 'intrusion' }],
      ['POST', `/v1/collections/${id}/search`, { query: 'bees' }],
      ['DELETE', `/v1/collections/${id}/documents/${doc.documentId}`, undefined],
    ] as const) {
      const r = await call<ErrorBody>(p, other.apiKey, method, path, body);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    const list = await call<{ data: { id: string }[] }>(p, other.apiKey, 'GET', '/v1/collections');
    expect(list.body.data.map((c) => c.id)).not.toContain(id);
    // Still intact for its owner.
    expect(await search(p, owner.apiKey, id, { query: 'bees', threshold: 0 })).toHaveLength(1);
  });

  it('requires an API key', async () => {
    const res = await p.request('/v1/collections', { method: 'GET' });
    expect(res.status).toBe(401);
  });
});
