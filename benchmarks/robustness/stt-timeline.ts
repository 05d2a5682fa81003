/**
 * What a streaming STT would send for a caller's turn whose words are known (the corpus's transcript) but not timed:
 * where each word lies in the audio, and the interim and final transcripts that follow from that (bench:robustness,
 * the turn-end path). Pure functions, so the timing rules are tested on their own (test/realtime/stt-timeline.test.ts).
 */

/** A stretch of the caller's speech, [fromMs, toMs) audio time. */
export type Span = readonly [number, number];

export interface TimedWord {
  word: string;
  startMs: number;
  endMs: number;
}

/** Which of the simulated STT's finals close with a full stop (`streamingTranscripts`). */
export type Punctuation = 'none' | 'end' | 'every';
export const PUNCTUATIONS: readonly Punctuation[] = ['none', 'end', 'every'];

/** A transcript as the STT would send it: `atMs` when it arrives (audio time), `endMs` where its last word ends. */
export interface TimedTranscript {
  atMs: number;
  text: string;
  final: boolean;
  endMs: number;
}

/**
 * Spreads the words over the speech spans by their length in letters (a longer word takes longer to say). Each
 * word goes to a span: laid end to end, the spans make one timeline of speech, each word takes its share of it in
 * order, and belongs to the span that holds the middle of its share. Then each span's words share that span by
 * their letters, end to end, so a pause falls between two words, never inside one. The rule's limits: within a span
 * the words are evenly paced, so a boundary can sit a syllable or two off; a span too short for the middle of any
 * word's share (a breath, a click) gets none; a stop consonant's silence inside a word parts it from itself.
 */
export function spreadWords(text: string, spans: readonly Span[]): TimedWord[] {
  const words = text.split(/\s+/).filter(Boolean);
  const live = spans.filter(([a, b]) => b > a);
  const total = live.reduce((s, [a, b]) => s + (b - a), 0);
  if (words.length === 0 || total <= 0) return [];
  const weights = words.map((w) => w.replace(/[^\p{L}\p{N}]/gu, '').length || 1);
  const sum = weights.reduce((a, b) => a + b, 0);
  /** The index of the span holding `t` ms into the speech timeline. */
  const spanAt = (t: number): number => {
    let offset = 0;
    for (const [i, [a, b]] of live.entries()) {
      offset += b - a;
      if (t < offset) return i;
    }
    return live.length - 1;
  };
  const bySpan = live.map(() => [] as number[]);
  let acc = 0;
  for (const i of words.keys()) {
    const middle = ((acc + weights[i]! / 2) / sum) * total;
    acc += weights[i]!;
    bySpan[spanAt(middle)]!.push(i);
  }
  const out: TimedWord[] = [];
  for (const [k, idx] of bySpan.entries()) {
    const [a, b] = live[k]!;
    const letters = idx.reduce((s, i) => s + weights[i]!, 0);
    let at = 0;
    for (const i of idx) {
      const startMs = a + ((b - a) * at) / letters;
      at += weights[i]!;
      out.push({ word: words[i]!, startMs: Math.round(startMs), endMs: Math.round(a + ((b - a) * at) / letters) });
    }
  }
  return out;
}

/**
 * The transcripts a streaming STT sends for timed words, `lagMs` after the audio they cover: an interim as each word
 * ends (the words since the last final), and a final when the speech pauses for `finalGapMs` or more (the vendor's
 * own endpointing) and after the last word, with the words since the one before. `punctuate`: which finals close
 * with a full stop — `end`: the last (the caller's sentence ends there; a punctuating STT that reads the language
 * right), `every`: each (an STT that takes every pause for a sentence's end), `none`: none (all finals open).
 */
export function streamingTranscripts(
  words: readonly TimedWord[],
  opts: { lagMs: number; finalGapMs: number; punctuate: Punctuation },
): TimedTranscript[] {
  const out: TimedTranscript[] = [];
  let open: string[] = [];
  for (const [i, w] of words.entries()) {
    open.push(w.word);
    const next = words[i + 1];
    const at = w.endMs + opts.lagMs;
    if (!next || next.startMs - w.endMs >= opts.finalGapMs) {
      const text = open.join(' ');
      const stop = opts.punctuate === 'every' || (opts.punctuate === 'end' && !next);
      out.push({ atMs: at, text: stop ? `${text}.` : text, final: true, endMs: w.endMs });
      open = [];
    } else out.push({ atMs: at, text: open.join(' '), final: false, endMs: w.endMs });
  }
  return out;
}
