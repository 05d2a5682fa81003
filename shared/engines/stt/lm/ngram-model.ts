/**
 * A backoff n-gram model (order ≤ 3) over word ids of one shared vocabulary, as the builder holds it: log10
 * probabilities and backoff weights keyed by the ids packed into one number (17 bits a word, so a trigram's key stays
 * a safe integer). What an ARPA file says, in memory.
 */

export const MAX_VOCAB = 1 << 17;
export const NO_PROB = -99;

export interface NgramEntry {
  /** log10 P(last word | the words before it). */
  prob: number;
  /** log10 backoff weight of this n-gram as a context (0 when it is none). */
  backoff: number;
}

export interface NgramModel {
  /** One map per order: order 1 at index 0. */
  orders: Array<Map<number, NgramEntry>>;
}

export function key(ids: readonly number[]): number {
  let k = 0;
  for (const id of ids) k = k * MAX_VOCAB + id;
  return k;
}

export function unkey(k: number, n: number): number[] {
  const ids = new Array<number>(n);
  for (let i = n - 1; i >= 0; i--) {
    ids[i] = k % MAX_VOCAB;
    k = Math.floor(k / MAX_VOCAB);
  }
  return ids;
}

/** log10 P(w | history) with backoff; -Infinity for a word the model does not know. */
export function logProb(model: NgramModel, history: readonly number[], w: number): number {
  const n = history.length + 1;
  if (n > model.orders.length) return logProb(model, history.slice(1), w);
  const hit = model.orders[n - 1]!.get(key([...history, w]));
  if (hit && hit.prob > NO_PROB) return hit.prob;
  if (n === 1) return -Infinity;
  const ctx = model.orders[n - 2]!.get(key(history));
  return (ctx?.backoff ?? 0) + logProb(model, history.slice(1), w);
}
