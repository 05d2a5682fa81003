/** Shortest part a compound is split into: "co" of "copay", "in" of "inbox"; one letter is never a word part. */
const MIN_PART = 2;

/**
 * The pronunciation of a word the dictionary lacks as two words it has ("copay" → co + pay: K OW P EY, where the
 * letter-to-sound rules read K AA P EY), or null when no split into two known words exists. Of the splits, the one
 * whose shorter part is longest wins (the first on a tie), so the dictionary's many stray two-letter entries decide
 * only when nothing longer fits. The rules read letters one at a time and miss where a word's parts meet; a known
 * part's pronunciation does not, but a suffix that is also a word ("cork|age") reads wrong, so the caller keeps the
 * rules' guess beside this one (test/speech/letter-to-sound.test.ts measures both on held-out dictionary words).
 */
export function compoundPronunciation(word: string, reference: ReadonlyMap<string, string[]>): string | null {
  let best: { shorter: number; phones: string } | null = null;
  for (let i = MIN_PART; i <= word.length - MIN_PART; i++) {
    const left = reference.get(word.slice(0, i));
    const right = reference.get(word.slice(i));
    if (!left || !right) continue;
    const shorter = Math.min(i, word.length - i);
    if (!best || shorter > best.shorter) best = { shorter, phones: `${left[0]} ${right[0]}` };
  }
  return best?.phones ?? null;
}
