/**
 * Splits text into pieces a local synthesizer renders one at a time, so the first audio is out after the first
 * piece rather than the whole text. Pieces end at sentence ends; long sentences are cut at clause boundaries
 * (, ; :) and, failing those, at a word boundary. The first piece is kept short (about `firstWords` words) for a
 * fast first byte; later pieces may be longer (`maxWords`).
 */
export function splitForSynthesis(text: string, opts: { firstWords?: number; maxWords?: number } = {}): string[] {
  const firstWords = opts.firstWords ?? 8;
  const maxWords = opts.maxWords ?? 40;
  const clean = normalizeText(text);
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
    if (words.length <= Math.max(limit * 1.5, 4)) {
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
    if (last !== undefined && p.split(' ').length <= 2 && out.length > 1) out[out.length - 1] = `${last} ${p}`;
    else out.push(p);
  }
  return out;
}
