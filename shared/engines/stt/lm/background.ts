import { backgroundCachePath, readCachedBackground, writeCachedBackground } from './background-cache.ts';
import { readTrieModel } from './trie-reader.ts';
import { key, type NgramEntry, type NgramModel } from './ngram-model.ts';

/**
 * The general English model, pruned to what a per-agent model carries as its background: the most likely words and
 * the n-grams that carry most of the probability mass (scored by their approximate joint log probability). A per-agent
 * model is rebuilt whenever an agent changes, written as ARPA and loaded by every decoder of its calls, so it must be
 * small enough to write in about a second and load in well under one; the full general model (3.8 M n-grams) is
 * neither. The general model itself stays as it is for every request without a bias.
 */
export interface BackgroundSize {
  words: number;
  bigrams: number;
  trigrams: number;
}

export const BACKGROUND_SIZE: BackgroundSize = { words: 30_000, bigrams: 400_000, trigrams: 250_000 };

export interface Background {
  /** Word strings by id (ids 0…words.length-1 of every model built on it). */
  words: string[];
  model: NgramModel;
}

const loaded = new Map<string, Promise<Background>>();

/**
 * The background for `lmPath` (the general model), read and pruned once per process; with `cacheDir`, once per
 * general model on that disk (background-cache.ts: each build is a process of its own).
 */
export function loadBackground(
  lmPath: string,
  size: BackgroundSize = BACKGROUND_SIZE,
  cacheDir?: string,
): Promise<Background> {
  const id = `${lmPath}|${size.words}|${size.bigrams}|${size.trigrams}|${cacheDir ?? ''}`;
  let p = loaded.get(id);
  if (!p) {
    p = cacheDir ? cachedOrPruned(lmPath, size, cacheDir) : pruneGeneral(lmPath, size);
    p.catch(() => loaded.delete(id));
    loaded.set(id, p);
  }
  return p;
}

async function cachedOrPruned(lmPath: string, size: BackgroundSize, cacheDir: string): Promise<Background> {
  const path = await backgroundCachePath(cacheDir, lmPath, size);
  const hit = await readCachedBackground(path);
  if (hit) return hit;
  const bg = await pruneGeneral(lmPath, size);
  await writeCachedBackground(path, bg);
  return bg;
}

/** The score above which at most `n` of `scores` lie (all of them when there are fewer). */
function threshold(scores: Float32Array, count: number, n: number): number {
  if (count <= n) return -Infinity;
  const sorted = scores.slice(0, count).sort();
  return sorted[count - n]!;
}

async function pruneGeneral(lmPath: string, size: BackgroundSize): Promise<Background> {
  const trie = await readTrieModel(lmPath);
  const n1 = trie.words.length;
  // Words: the most likely, plus the sentence marks (whose unigram probabilities say nothing of their use).
  const byProb = Array.from({ length: n1 }, (_, i) => i).sort((a, b) => trie.uniProb[b]! - trie.uniProb[a]!);
  const keep = new Int32Array(n1).fill(-1);
  const words: string[] = [];
  const take = (old: number) => {
    if (keep[old]! < 0) {
      keep[old] = words.length;
      words.push(trie.words[old]!);
    }
  };
  for (const w of ['<s>', '</s>']) {
    const i = trie.words.indexOf(w);
    if (i >= 0) take(i);
  }
  for (const old of byProb.slice(0, size.words)) take(old);

  const uni = new Map<number, NgramEntry>();
  for (let old = 0; old < n1; old++) {
    if (keep[old]! >= 0) uni.set(keep[old]!, { prob: trie.uniProb[old]!, backoff: trie.uniBackoff[old]! });
  }
  const kept = (w: readonly number[]) => w.every((id) => keep[id]! >= 0);
  const ids = (w: readonly number[]) => w.map((id) => keep[id]!);
  // Bigrams scored by log P(a) + log P(b|a), trigrams by log P(a) + log P(b|a) + log P(c|a b) (context kept).
  const scores = new Float32Array(Math.max(trie.counts[1] ?? 0, trie.counts[2] ?? 0));
  let n = 0;
  trie.forEach((w, prob) => {
    if (w.length === 2 && kept(w)) scores[n++] = trie.uniProb[w[0]!]! + prob;
  });
  const biMin = threshold(scores, n, size.bigrams);
  const bi = new Map<number, NgramEntry>();
  trie.forEach((w, prob, backoff) => {
    if (w.length === 2 && kept(w) && trie.uniProb[w[0]!]! + prob >= biMin) bi.set(key(ids(w)), { prob, backoff });
  });
  const triScore = (w: readonly number[], prob: number): number => {
    if (!kept(w)) return -Infinity;
    const ctx = bi.get(key(ids([w[0]!, w[1]!])));
    return ctx ? trie.uniProb[w[0]!]! + ctx.prob + prob : -Infinity;
  };
  n = 0;
  trie.forEach((w, prob) => {
    if (w.length === 3) {
      const sc = triScore(w, prob);
      if (sc > -Infinity) scores[n++] = sc;
    }
  });
  const triMin = threshold(scores, n, size.trigrams);
  const tri = new Map<number, NgramEntry>();
  trie.forEach((w, prob) => {
    if (w.length === 3 && triScore(w, prob) >= triMin) tri.set(key(ids(w)), { prob, backoff: 0 });
  });
  return { words, model: { orders: [uni, bi, tri] } };
}
