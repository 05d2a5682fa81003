/** Lower-case words without punctuation: what a word error rate counts. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** Levenshtein distance between two token sequences (substitutions, insertions and deletions cost one). */
export function editDistance<T>(ref: readonly T[], hyp: readonly T[]): number {
  let prev = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const cur = [i];
    for (let j = 1; j <= hyp.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[hyp.length]!;
}

/** Word-level edit distance (substitutions + insertions + deletions). */
export function wordErrors(ref: string, hyp: string): number {
  return editDistance(words(ref), words(hyp));
}

/** Word errors of `hyp` against `ref` and the reference's word count, for a WER summed over many utterances. */
export function countWordErrors(ref: string, hyp: string): { errors: number; words: number } {
  const r = words(ref);
  return { errors: editDistance(r, words(hyp)), words: r.length };
}

/** Word error rate of `hyp` against `ref`: word errors over the words of `ref` (0 for two empty texts). */
export function wordErrorRate(ref: string, hyp: string): number {
  const n = words(ref).length;
  return n ? wordErrors(ref, hyp) / n : words(hyp).length ? 1 : 0;
}
