/**
 * What a hosted streaming STT gets wrong, for the live-transcription doubles: a seeded random source (the same seed
 * gives the same errors, so a benchmark run can be repeated), word errors at a given word error rate
 * (substitutions, deletions and insertions in equal shares, as WER counts them) and final-result jitter.
 */

/** mulberry32: a small, fast, seedable PRNG; returns numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Words a recogniser puts in place of (or next to) what was said. Plain content words: a substitution that lands
 * on the last word of a segment leaves the words with no hint of how the sentence goes on, the hard case for
 * turn-taking (a substitution by a function word would read as "unfinished" and be harmless).
 */
const CONFUSIONS = ['week', 'tooth', 'morning', 'number', 'price', 'there', 'today', 'time', 'okay', 'car', 'phone'];

/** The punctuation glued to the end of a word ("hurting." → "."). */
function trailing(word: string): string {
  return /[.,!?;:…]+$/.exec(word)?.[0] ?? '';
}

function bare(word: string): string {
  return word.replace(/[.,!?;:…]+$/, '');
}

/**
 * `words` as a recogniser with word error rate `wer` transcribes them: each word is, with probability `wer`, replaced,
 * dropped, or followed by an inserted word (a third each). The sentence's final punctuation stays at the end (the
 * punctuation model still hears the falling end): a dropped last word moves it to the word before.
 */
export function withWordErrors(words: string[], wer: number, rnd: () => number): string[] {
  if (wer <= 0 || words.length === 0) return words;
  const end = trailing(words.at(-1)!);
  const out: string[] = [];
  for (const w of words) {
    if (rnd() >= wer) {
      out.push(w);
      continue;
    }
    const kind = rnd();
    const other = CONFUSIONS[Math.floor(rnd() * CONFUSIONS.length)]!;
    if (kind < 1 / 3) out.push(other + trailing(w));
    else if (kind < 2 / 3) continue;
    else out.push(bare(w), other + trailing(w));
  }
  if (out.length === 0) return [words[0]!];
  const last = out.length - 1;
  if (end && !out[last]!.endsWith(end)) out[last] = bare(out[last]!) + end;
  return out;
}

/** A delay of `ms` ± up to `jitterMs` (uniform), never negative. */
export function jittered(ms: number, jitterMs: number, rnd: () => number): number {
  return jitterMs > 0 ? Math.max(0, ms + (rnd() * 2 - 1) * jitterMs) : ms;
}
