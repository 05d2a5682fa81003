import { breakLongTokens } from './speakable.ts';

/**
 * The most characters in one piece. flite renders a piece as one utterance, and its clustergen voices (slt, awb,
 * rms) cost more per character the longer the utterance: measured here, 60 four-digit numbers (299 characters,
 * 118 s of audio) took 6.4 s of CPU with slt and 8.1 s with rms, where a 100-character sentence takes 0.09 s.
 * Cutting at 200 characters bounds one piece's CPU time, and so how long a worker is held from the next developer
 * (flite-pool.ts); a piece of 40 ordinary words is about 240 characters, so ordinary prose is cut much as before.
 */
export const MAX_PIECE_CHARS = 200;

/**
 * Splits text into pieces a local synthesizer renders one at a time, so the first audio is out after the first
 * piece rather than the whole text. Pieces end at sentence ends; long sentences are cut at clause boundaries
 * (, ; :) and, failing those, at a word boundary. The first piece is kept short (about `firstWords` words) for a
 * fast first byte; later pieces may be longer (`maxWords`), and no piece is longer than MAX_PIECE_CHARS (a token
 * without spaces longer than a word is first broken after its punctuation, speakable.ts).
 */
export function splitForSynthesis(text: string, opts: { firstWords?: number; maxWords?: number } = {}): string[] {
  const firstWords = opts.firstWords ?? 8;
  const maxWords = opts.maxWords ?? 40;
  const clean = breakLongTokens(normalizeText(text));
  if (!clean) return [];
  const sentences = clean.match(/[^.!?。！？\n]+(?:[.!?。！？]+["')\]]*|\n|$)/g) ?? [clean];
  const pieces: string[] = [];
  for (const raw of sentences) {
    const s = raw.trim();
    if (!s) continue;
    const limit = pieces.length === 0 ? firstWords : maxWords;
    pieces.push(...cutLong(s, limit, maxWords));
  }
  return mergeTiny(pieces.filter((p) => /[\p{L}\p{N}]/u.test(p)));
}

/** Collapses whitespace and drops control characters (a synthesizer reads them as noise or options). */
export function normalizeText(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- stripping control characters is the point
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, ' ')
      .replace(/[ \t\r]+/g, ' ')
      .replace(/\n\s*/g, '\n')
      .trim()
  );
}

function cutLong(sentence: string, firstLimit: number, maxWords: number): string[] {
  const out: string[] = [];
  let rest = sentence;
  let limit = firstLimit;
  for (;;) {
    const words = rest.split(' ');
    if (words.length <= Math.max(limit * 1.5, 4) && rest.length <= MAX_PIECE_CHARS) {
      out.push(rest);
      return out;
    }
    // Prefer a clause boundary between half the limit and 1.5× the limit.
    let cut = -1;
    for (let i = Math.ceil(limit / 2); i < Math.min(words.length - 2, Math.floor(limit * 1.5)); i++) {
      if (/[,;:]$/.test(words[i - 1]!)) {
        cut = i;
        if (i >= limit) break;
      }
    }
    if (cut < 0) cut = limit;
    cut = Math.min(cut, wordsWithin(words, MAX_PIECE_CHARS));
    out.push(words.slice(0, cut).join(' '));
    rest = words.slice(cut).join(' ');
    limit = maxWords;
  }
}

/** Joins pieces of one or two words onto their neighbour: they synthesize badly on their own. */
function mergeTiny(pieces: string[]): string[] {
  const out: string[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    const fits = last !== undefined && last.length + 1 + p.length <= MAX_PIECE_CHARS;
    if (fits && p.split(' ').length <= 2 && out.length > 1) out[out.length - 1] = `${last} ${p}`;
    else out.push(p);
  }
  return out;
}

/** How many of the leading words fit in `chars` characters joined by spaces (at least one). */
function wordsWithin(words: string[], chars: number): number {
  let n = 0;
  let len = -1;
  while (n < words.length && len + 1 + words[n]!.length <= chars) len += 1 + words[n++]!.length;
  return Math.max(1, n);
}
