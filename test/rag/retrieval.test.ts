import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { createCollection, ingest, search } from './helpers.ts';

/**
 * Retrieval quality of the default (local) embedder through the real API, on the committed set in
 * test/fixtures/rag/retrieval-set.json: 35 original short articles on unrelated topics, 76 questions each
 * answered by one article (paraphrased, some with almost no words in common), 14 queries on absent topics.
 * Measured when committed: recall@5 1.000, recall@1 ≥ 0.98, recall@5 counting only results ≥ 0.7: 1.000.
 */
const RECALL_AT_5_FLOOR = 0.9;
const RECALL_AT_5_ABOVE_THRESHOLD_FLOOR = 0.85;

interface RetrievalSet {
  documents: { id: string; title: string; text: string }[];
  questions: { question: string; documentId: string }[];
  unrelated: string[];
}
const set = JSON.parse(
  readFileSync(new URL('../fixtures/rag/retrieval-set.json', import.meta.url), 'utf8'),
) as RetrievalSet;

let p: TestPlatform;
let key: string;
let collectionId: string;
const fixtureOf = new Map<string, string>(); // documentId → fixture id

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  key = (await p.developer('scale')).apiKey;
  collectionId = await createCollection(p, key, 'retrieval set');
  for (const d of set.documents) {
    const r = await ingest(p, key, collectionId, { content: `${d.title}\n\n${d.text}`, metadata: { fixture: d.id } });
    fixtureOf.set(r.documentId, d.id);
  }
});
afterAll(() => p?.close());

describe('retrieval quality of the default embedder', () => {
  it('has a set of at least 40 questions over at least 30 documents', () => {
    expect(set.documents.length).toBeGreaterThanOrEqual(30);
    expect(set.questions.length).toBeGreaterThanOrEqual(40);
    expect(new Set(set.questions.map((q) => q.documentId)).size).toBeGreaterThanOrEqual(30);
  });

  it(`finds the answering document in the top 5 for at least ${RECALL_AT_5_FLOOR} of the questions`, async () => {
    let top1 = 0;
    let top5 = 0;
    let top5AboveThreshold = 0;
    const misses: string[] = [];
    for (const q of set.questions) {
      const all = await search(p, key, collectionId, { query: q.question, limit: 5, threshold: 0 });
      const ids = all.map((r) => fixtureOf.get(r.documentId));
      if (ids[0] === q.documentId) top1++;
      if (ids.includes(q.documentId)) top5++;
      else misses.push(`${q.question} → ${ids.join(', ')}`);
      const def = await search(p, key, collectionId, { query: q.question, limit: 5 });
      if (def.some((r) => fixtureOf.get(r.documentId) === q.documentId)) top5AboveThreshold++;
      expect(def.every((r) => r.score >= 0.7)).toBe(true);
    }
    const n = set.questions.length;
    process.stdout.write(
      `retrieval set: ${n} questions, ${set.documents.length} documents — recall@1 ${(top1 / n).toFixed(3)}, ` +
        `recall@5 ${(top5 / n).toFixed(3)}, recall@5 at the default threshold 0.7 ${(top5AboveThreshold / n).toFixed(3)}\n` +
        (misses.length ? `misses:\n  ${misses.join('\n  ')}\n` : ''),
    );
    expect(top5 / n).toBeGreaterThanOrEqual(RECALL_AT_5_FLOOR);
    expect(top5AboveThreshold / n).toBeGreaterThanOrEqual(RECALL_AT_5_ABOVE_THRESHOLD_FLOOR);
  });

  it('returns nothing at the default threshold for queries on topics the collection does not cover', async () => {
    const leaks: string[] = [];
    for (const query of set.unrelated) {
      const results = await search(p, key, collectionId, { query });
      if (results.length) leaks.push(`${query} → ${results[0]!.score} ${fixtureOf.get(results[0]!.documentId)}`);
    }
    expect(leaks).toEqual([]);
  });
});
