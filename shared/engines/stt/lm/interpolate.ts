import { key, logProb, NO_PROB, unkey, type NgramEntry, type NgramModel } from './ngram-model.ts';

/**
 * Static linear interpolation of two backoff models into one backoff model (what SRILM's `ngram -mix-lm` writes):
 * every n-gram either model lists gets P = λ·P_a(w|h) + (1−λ)·P_b(w|h), each side computed with its own backoff,
 * and each context's backoff weight is recomputed so that the mixed model's probabilities still sum to one:
 * bow(h) = (1 − Σ P(w|h)) / (1 − Σ P(w|h⁻)) over the words listed after h. Both models use one vocabulary of ids.
 * `<s>` keeps no probability of its own (it is never predicted).
 */
export function interpolate(a: NgramModel, b: NgramModel, lambda: number, bos: number): NgramModel {
  const la = Math.log10(lambda);
  const lb = Math.log10(1 - lambda);
  const mix = (x: number, y: number) => {
    const p = Math.max(x + la, y + lb);
    const q = Math.min(x + la, y + lb);
    return q === -Infinity ? p : p + Math.log10(1 + 10 ** (q - p));
  };
  const orders: Array<Map<number, NgramEntry>> = [];
  const out: NgramModel = { orders };
  for (let n = 1; n <= 3; n++) {
    const m = new Map<number, NgramEntry>();
    orders.push(m);
    const keys = new Set<number>([...(a.orders[n - 1]?.keys() ?? []), ...(b.orders[n - 1]?.keys() ?? [])]);
    for (const k of keys) {
      const ids = unkey(k, n);
      const h = ids.slice(0, -1);
      const w = ids[n - 1]!;
      const prob = n === 1 && w === bos ? NO_PROB : mix(logProb(a, h, w), logProb(b, h, w));
      m.set(k, { prob: Number.isFinite(prob) ? prob : NO_PROB, backoff: 0 });
    }
  }
  // Backoff weights: per context of order n-1, the mass of its listed followers under it and under its suffix.
  for (let n = 2; n <= 3; n++) {
    const above = new Map<number, number>();
    const below = new Map<number, number>();
    for (const [k, e] of orders[n - 1]!) {
      const ids = unkey(k, n);
      const ctx = key(ids.slice(0, -1));
      above.set(ctx, (above.get(ctx) ?? 0) + 10 ** e.prob);
      below.set(ctx, (below.get(ctx) ?? 0) + 10 ** logProb(out, ids.slice(1, -1), ids[n - 1]!));
    }
    for (const [ctx, sum] of above) {
      const e = orders[n - 2]!.get(ctx);
      if (!e) continue;
      // Rounding (and the pruned background's missing mass) can push a sum to one: keep a small floor.
      const num = Math.max(1e-6, 1 - sum);
      const den = Math.max(1e-6, 1 - below.get(ctx)!);
      e.backoff = Math.log10(num / den);
    }
  }
  return out;
}
