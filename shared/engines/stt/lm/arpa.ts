import { unkey, type NgramModel } from './ngram-model.ts';

/** The model as an ARPA file (what pocketsphinx's `-lm` reads), n-grams in word-id order. */
export function toArpa(model: NgramModel, words: readonly string[]): string {
  const n = model.orders.length;
  const out: string[] = ['\\data\\'];
  model.orders.forEach((m, i) => out.push(`ngram ${i + 1}=${m.size}`));
  for (let order = 1; order <= n; order++) {
    out.push('', `\\${order}-grams:`);
    const keys = [...model.orders[order - 1]!.keys()].sort((a, b) => a - b);
    for (const k of keys) {
      const e = model.orders[order - 1]!.get(k)!;
      const text = unkey(k, order)
        .map((id) => words[id]!)
        .join(' ');
      out.push(order < n ? `${e.prob.toFixed(4)}\t${text}\t${e.backoff.toFixed(4)}` : `${e.prob.toFixed(4)}\t${text}`);
    }
  }
  out.push('', '\\end\\', '');
  return out.join('\n');
}
