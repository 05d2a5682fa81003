import { key, type NgramEntry, type NgramModel } from './ngram-model.ts';

/** Absolute discount of the bigram and trigram counts (the usual 0.7 for small corpora: no tuning on our tests). */
const DISCOUNT = 0.7;

/**
 * A trigram model of a small corpus (the agent's own words and the conversational base), with interpolated
 * absolute discounting written in backoff form: a seen n-gram gets (c − D)/c(h) + γ(h)·P(w|h⁻), an unseen one
 * γ(h)·P(w|h⁻), so γ(h) = D·N₁₊(h•)/c(h) is the context's backoff weight. Unigrams are add-½ over the corpus
 * vocabulary. `idOf` maps a word to its id in the shared vocabulary (see ngram-model.ts).
 */
export function buildDomainModel(sentences: string[][], idOf: (w: string) => number): NgramModel {
  const bos = idOf('<s>');
  const eos = idOf('</s>');
  const counts = [new Map<number, number>(), new Map<number, number>(), new Map<number, number>()];
  for (const s of sentences) {
    const ids = [bos, ...s.map(idOf), eos];
    for (let i = 0; i < ids.length; i++) {
      for (let n = 1; n <= 3 && i - n + 1 >= 0; n++) {
        if (n === 1 && i === 0) continue; // <s> is never predicted
        const k = key(ids.slice(i - n + 1, i + 1));
        counts[n - 1]!.set(k, (counts[n - 1]!.get(k) ?? 0) + 1);
      }
    }
  }
  // Context totals and distinct followers, per order of the context.
  const ctxTotal = [new Map<number, number>(), new Map<number, number>()];
  const ctxTypes = [new Map<number, number>(), new Map<number, number>()];
  for (let n = 2; n <= 3; n++) {
    for (const [k, c] of counts[n - 1]!) {
      const ctx = Math.floor(k / (1 << 17));
      ctxTotal[n - 2]!.set(ctx, (ctxTotal[n - 2]!.get(ctx) ?? 0) + c);
      ctxTypes[n - 2]!.set(ctx, (ctxTypes[n - 2]!.get(ctx) ?? 0) + 1);
    }
  }
  const orders: Array<Map<number, NgramEntry>> = [new Map(), new Map(), new Map()];
  const vocab = counts[0]!.size + 1;
  let total = 0;
  for (const c of counts[0]!.values()) total += c;
  const uniP = new Map<number, number>();
  for (const [k, c] of counts[0]!) uniP.set(k, (c + 0.5) / (total + 0.5 * vocab));
  uniP.set(bos, 0);
  const gamma = (n: number, ctx: number) =>
    (DISCOUNT * (ctxTypes[n - 2]!.get(ctx) ?? 0)) / (ctxTotal[n - 2]!.get(ctx) ?? 1);
  const biP = new Map<number, number>();
  for (const [k, c] of counts[1]!) {
    const [a, b] = [Math.floor(k / (1 << 17)), k % (1 << 17)];
    biP.set(k, (c - DISCOUNT) / ctxTotal[0]!.get(a)! + gamma(2, a) * uniP.get(b)!);
  }
  const lower = (b: number, c: number) => biP.get(key([b, c])) ?? gamma2(b) * uniP.get(c)!;
  const gamma2 = (b: number) => (ctxTotal[0]!.has(b) ? gamma(2, b) : 1);
  for (const [k, c] of counts[2]!) {
    const ab = Math.floor(k / (1 << 17));
    const [b, w] = [ab % (1 << 17), k % (1 << 17)];
    orders[2]!.set(k, {
      prob: Math.log10((c - DISCOUNT) / ctxTotal[1]!.get(ab)! + gamma(3, ab) * lower(b, w)),
      backoff: 0,
    });
  }
  for (const [k, p] of biP) {
    orders[1]!.set(k, { prob: Math.log10(p), backoff: ctxTotal[1]!.has(k) ? Math.log10(gamma(3, k)) : 0 });
  }
  for (const [k, p] of uniP) {
    orders[0]!.set(k, {
      prob: k === bos ? -99 : Math.log10(p),
      backoff: ctxTotal[0]!.has(k) ? Math.log10(gamma(2, k)) : 0,
    });
  }
  return { orders };
}
