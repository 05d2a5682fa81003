import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCohereDouble } from '../../support/doubles/cohere.ts';
import type { HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { startOpenAiDouble } from '../../support/doubles/openai.ts';
import { startVoyageDouble } from '../../support/doubles/voyage.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { isEngineError } from '../../shared/kernel/errors/engine-error.ts';
import { CohereEmbeddings } from '../../shared/engines/embeddings/cohere.ts';
import { LocalSifEmbeddings } from '../../shared/engines/embeddings/local-sif.ts';
import { decodeModel, encodeModel } from '../../shared/engines/embeddings/model-file.ts';
import { OpenAiEmbeddings } from '../../shared/engines/embeddings/openai.ts';
import { localModelPath } from '../../shared/engines/embeddings/registry.ts';
import { tokenize } from '../../shared/engines/embeddings/tokenize.ts';
import type { EmbeddingEngine } from '../../shared/engines/embeddings/types.ts';
import { VoyageEmbeddings } from '../../shared/engines/embeddings/voyage.ts';

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(cos(a, a));

describe('local GloVe-SIF engine', () => {
  const engine = new LocalSifEmbeddings({ modelPath: localModelPath(loadConfig()) });

  it('loads the compiled model quickly and within memory bounds', () => {
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const m = engine.load();
    const ms = performance.now() - t0;
    const mb = (process.memoryUsage().rss - rss0) / 1024 / 1024;
    process.stdout.write(
      `local embedding model: ${m.count} words, loaded in ${ms.toFixed(0)} ms, +${mb.toFixed(0)} MB RSS\n`,
    );
    expect(m.dimension).toBe(100);
    expect(m.count).toBeGreaterThan(300_000);
    // Loose bounds (the benchmark reports the figures): a loaded machine may be slow, never this slow.
    expect(ms).toBeLessThan(5000);
    expect(mb).toBeLessThan(200);
  });

  it('returns unit vectors of 100 dimensions, deterministically', async () => {
    const [a, b] = await engine.embed(['Bees make honey from nectar.', 'Bees make honey from nectar.']);
    expect(a!.length).toBe(100);
    expect(norm(a!)).toBeCloseTo(1, 5);
    expect(Array.from(a!)).toEqual(Array.from(b!));
  });

  it('places related sentences closer than unrelated ones', async () => {
    const [cat, kitten, desk, revenue] = await engine.embed([
      'The cat rested on the carpet.',
      'The kitten slept on the rug.',
      'The desk was in the study room.',
      'Quarterly revenue grew by ten percent.',
    ]);
    expect(cos(cat!, kitten!)).toBeGreaterThan(cos(cat!, desk!));
    expect(cos(cat!, kitten!)).toBeGreaterThan(cos(cat!, revenue!) + 0.3);
  });

  it('embeds text with no known word to the zero vector', async () => {
    const [v] = await engine.embed(['zzqxv qqwzzk']);
    expect(norm(v!)).toBe(0);
  });

  it('weights rare words above frequent ones', () => {
    expect(engine.wordWeight('the')).toBeLessThan(0.05);
    expect(engine.wordWeight('photosynthesis')).toBeGreaterThan(0.9);
    expect(engine.wordWeight('notawordzzq')).toBe(1);
  });

  it('counts word tokens for usage', () => {
    expect(engine.countTokens("It's the bee's knees, isn't it?")).toBe(
      tokenize("It's the bee's knees, isn't it?").length,
    );
    expect(tokenize("The U.S. e-mail o'neill's 3.5%")).toEqual(['the', 'u.s', 'e-mail', "o'neill", "'s", '3.5']);
  });

  it('round-trips the binary model format', () => {
    const model = {
      dimension: 3,
      count: 2,
      pc: Float32Array.from([1, 0, 0]),
      weights: Float32Array.from([0.5, 1]),
      scales: Float32Array.from([0.01, 0.02]),
      vectors: Int8Array.from([1, -2, 3, 127, -127, 0]),
      words: ['alpha', 'beta'],
    };
    const back = decodeModel(encodeModel(model));
    expect(back.words).toEqual(['alpha', 'beta']);
    expect(Array.from(back.vectors)).toEqual([1, -2, 3, 127, -127, 0]);
    expect(Array.from(back.weights)).toEqual([0.5, 1]);
    expect(() => decodeModel(Buffer.from('garbage-garbage-garbage-garbage'))).toThrow(/bad magic/);
  });
});

// ---- vendor adapters against local doubles that speak each vendor's wire format ----

function fakeVector(text: string, dim: number): number[] {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return Array.from({ length: dim }, (_, i) => Math.sin(h + i));
}

let openai: HttpDouble;
let cohere: HttpDouble;
let voyage: HttpDouble;
beforeAll(async () => {
  openai = await startOpenAiDouble({ prefix: '/openai/v1', keys: ['sk-test'], vector: fakeVector });
  cohere = await startCohereDouble({ prefix: '/cohere', key: 'sk-test', vector: fakeVector });
  voyage = await startVoyageDouble({ prefix: '/voyage/v1', key: 'sk-test', vector: fakeVector });
});
afterAll(() => Promise.all([openai?.close(), cohere?.close(), voyage?.close()]));

interface VendorCase {
  name: string;
  make(): EmbeddingEngine;
  dimension: number;
  path: string;
  double(): HttpDouble;
  /** Checks the recorded request body for `texts` embedded as `inputType`. */
  checkBody(body: Record<string, unknown>, texts: string[], inputType: 'document' | 'query'): void;
}

const vendors: VendorCase[] = [
  {
    name: 'openai',
    make: () => new OpenAiEmbeddings({ baseUrl: `${openai.url}/openai/v1` }),
    double: () => openai,
    dimension: 1536,
    path: '/openai/v1/embeddings',
    checkBody(body, texts) {
      expect(body).toEqual({ model: 'text-embedding-3-small', input: texts, encoding_format: 'float' });
    },
  },
  {
    name: 'cohere',
    make: () => new CohereEmbeddings({ baseUrl: `${cohere.url}/cohere` }),
    double: () => cohere,
    dimension: 1024,
    path: '/cohere/v2/embed',
    checkBody(body, texts, inputType) {
      expect(body).toEqual({
        model: 'embed-english-v3.0',
        texts,
        input_type: inputType === 'query' ? 'search_query' : 'search_document',
        embedding_types: ['float'],
        truncate: 'END',
      });
    },
  },
  {
    name: 'voyage',
    make: () => new VoyageEmbeddings({ baseUrl: `${voyage.url}/voyage/v1` }),
    double: () => voyage,
    dimension: 1024,
    path: '/voyage/v1/embeddings',
    checkBody(body, texts, inputType) {
      expect(body).toEqual({ input: texts, model: 'voyage-3.5', input_type: inputType, truncation: true });
    },
  },
];

describe.each(vendors)('$name embeddings adapter (conformance)', (v) => {
  it('sends the vendor request with the key and returns one vector per text, in order', async () => {
    const engine = v.make();
    expect(engine.dimension).toBe(v.dimension);
    expect(engine.capabilities.requiresKey).toBe(true);
    const double = v.double();
    double.requests.length = 0;
    const texts = ['first text', 'second text', 'third text'];
    const out = await engine.embed(texts, { apiKey: 'sk-test', inputType: 'query' });
    expect(out).toHaveLength(3);
    out.forEach((vec, i) => {
      expect(vec).toBeInstanceOf(Float32Array);
      expect(vec.length).toBe(v.dimension);
      expect(vec[0]).toBeCloseTo(fakeVector(texts[i]!, v.dimension)[0]!, 5);
    });
    expect(double.requests).toHaveLength(1);
    expect(double.requests[0]!.path).toBe(v.path);
    expect(double.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    v.checkBody(double.json(double.requests[0]), texts, 'query');
  });

  it('splits inputs larger than one request takes', async () => {
    const engine = v.make();
    const double = v.double();
    double.requests.length = 0;
    const texts = Array.from({ length: engine.capabilities.maxBatch + 3 }, (_, i) => `text ${i}`);
    const out = await engine.embed(texts, { apiKey: 'sk-test' });
    expect(out).toHaveLength(texts.length);
    expect(double.requests).toHaveLength(2);
    v.checkBody(double.json(double.requests[1]), texts.slice(engine.capabilities.maxBatch), 'document');
  });

  it('maps vendor errors to engine errors with their retry policy', async () => {
    const engine = v.make();
    for (const [status, kind, retryable] of [
      [401, 'auth', false],
      [429, 'rate_limited', true],
      [503, 'upstream', true],
      [400, 'bad_request', false],
    ] as const) {
      const clear = v.double().failUntilCleared(status);
      const err = await engine.embed(['x'], { apiKey: 'sk-test' }).catch((e: unknown) => e);
      clear();
      expect(isEngineError(err)).toBe(true);
      expect(err).toMatchObject({ provider: v.name, kind, retryable, status });
    }
  });

  it('refuses to call without a key, and honours an aborted signal', async () => {
    const engine = v.make();
    await expect(engine.embed(['x'])).rejects.toMatchObject({ name: 'EngineError', kind: 'auth' });
    const ac = new AbortController();
    ac.abort();
    await expect(engine.embed(['x'], { apiKey: 'k', signal: ac.signal })).rejects.toMatchObject({
      name: 'EngineError',
      kind: 'aborted',
    });
  });
});
