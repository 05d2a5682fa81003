/**
 * Word tokenizer shared by the model compiler and the local engine, close to the tokenization the GloVe
 * vectors were trained on: lower case, runs of letters/digits, inner hyphens, apostrophes and dots kept
 * ("e-mail", "o'neill", "u.s."), a trailing "'s" split off as its own token.
 */
const WORD = /[\p{L}\p{N}]+(?:[-'’.][\p{L}\p{N}]+)*/gu;

export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const w = m[0].replace(/’/g, "'");
    if (w.endsWith("'s") && w.length > 2) {
      out.push(w.slice(0, -2), "'s");
    } else {
      out.push(w);
    }
  }
  return out;
}
