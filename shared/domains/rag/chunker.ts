/**
 * Splits a document into chunks of at most `chunkSize` characters, each a contiguous slice of the (newline-
 * normalised) text, preferring to break at paragraph boundaries, then at sentence ends, then between words,
 * and only inside a word that alone exceeds the size. Consecutive chunks share up to `chunkOverlap`
 * characters: the last whole sentences of the previous chunk that fit, else its last words that fit.
 */
export interface Chunk {
  index: number;
  content: string;
  /** Offsets of the chunk in the normalised text (see normalizeText). */
  start: number;
  end: number;
}

export interface ChunkOptions {
  chunkSize: number;
  chunkOverlap: number;
}

interface Piece {
  start: number;
  end: number;
  paragraph: number;
}

/** Line endings unified, NULs dropped: the offsets chunks carry refer to this text. */
export function normalizeText(text: string): string {
  // eslint-disable-next-line no-control-regex -- NUL bytes cannot be stored in Postgres text columns.
  return text.replace(/\r\n?/g, '\n').replace(/\u0000/g, '');
}

const PARAGRAPH_BREAK = /\n[ \t]*\n\s*/g;
// A sentence ends at . ! ? (with closing quotes/brackets) before whitespace, or at a single line break.
const SENTENCE_END = /[.!?…]+["'”’)\]]*(?=\s)|\n/g;

/** Paragraphs → sentences → word runs → hard splits, each piece at most `max` characters. */
function pieces(text: string, max: number, runMax: number): { pieces: Piece[]; paragraphEnds: number[] } {
  const out: Piece[] = [];
  const paragraphEnds: number[] = [];
  const paragraphs: [number, number][] = [];
  let last = 0;
  for (const m of text.matchAll(PARAGRAPH_BREAK)) {
    paragraphs.push([last, m.index]);
    last = m.index + m[0].length;
  }
  paragraphs.push([last, text.length]);

  for (const [ps, pe] of paragraphs) {
    const para = paragraphEnds.length;
    let s = ps;
    const ends: number[] = [];
    const body = text.slice(ps, pe);
    for (const m of body.matchAll(SENTENCE_END)) ends.push(ps + m.index + m[0].length);
    ends.push(pe);
    let added = false;
    for (const e of ends) {
      const [ts, te] = trim(text, s, e);
      s = e;
      if (te <= ts) continue;
      for (const p of splitLong(text, ts, te, max, runMax)) {
        out.push({ ...p, paragraph: para });
        added = true;
      }
    }
    if (added) paragraphEnds.push(out[out.length - 1]!.end);
  }
  return { pieces: out, paragraphEnds };
}

function trim(text: string, s: number, e: number): [number, number] {
  while (s < e && /\s/.test(text[s]!)) s++;
  while (e > s && /\s/.test(text[e - 1]!)) e--;
  return [s, e];
}

/**
 * A sentence longer than max: runs of whole words of at most runMax characters (room left for the overlap),
 * and a word longer than that cut into parts.
 */
function splitLong(
  text: string,
  s: number,
  e: number,
  sentenceMax: number,
  max: number,
): { start: number; end: number }[] {
  if (e - s <= sentenceMax) return [{ start: s, end: e }];
  const out: { start: number; end: number }[] = [];
  let cs = -1;
  let ce = -1;
  const re = /\S+/g;
  re.lastIndex = s;
  for (let m = re.exec(text); m && m.index < e; m = re.exec(text)) {
    let ws = m.index;
    const we = Math.min(m.index + m[0].length, e);
    if (cs >= 0 && we - cs <= max) {
      ce = we;
      continue;
    }
    if (cs >= 0) out.push({ start: cs, end: ce });
    while (we - ws > max) {
      out.push({ start: ws, end: ws + max });
      ws += max;
    }
    cs = ws;
    ce = we;
  }
  if (cs >= 0) out.push({ start: cs, end: ce });
  return out;
}

export function chunkText(rawText: string, opts: ChunkOptions): Chunk[] {
  const { chunkSize: size, chunkOverlap: overlap } = opts;
  if (overlap >= size) throw new Error('chunkOverlap must be less than chunkSize');
  const text = normalizeText(rawText);
  const { pieces: all, paragraphEnds } = pieces(text, size, Math.max(1, size - overlap));
  const chunks: Chunk[] = [];
  let cur: Piece[] = [];
  let fresh = false; // cur holds at least one piece not already emitted

  const emit = () => {
    const start = cur[0]!.start;
    const end = cur[cur.length - 1]!.end;
    chunks.push({ index: chunks.length, content: text.slice(start, end), start, end });
  };

  /** The tail of the chunk just emitted that the next chunk repeats, fitting both the overlap and `next`. */
  const carry = (prev: Piece[], next: Piece): Piece[] => {
    if (overlap === 0) return [];
    const end = prev[prev.length - 1]!.end;
    const tail: Piece[] = [];
    for (let i = prev.length - 1; i >= 0; i--) {
      const p = prev[i]!;
      if (end - p.start > overlap || next.end - p.start > size) break;
      tail.unshift(p);
    }
    if (tail.length) return tail;
    // No whole sentence fits: the last words that do.
    const lastPiece = prev[prev.length - 1]!;
    const limit = Math.max(end - overlap, next.end - size, lastPiece.start);
    const re = /\S+/g;
    re.lastIndex = limit;
    for (let m = re.exec(text); m && m.index < end; m = re.exec(text)) {
      if (m.index >= limit && (m.index === 0 || /\s/.test(text[m.index - 1]!))) {
        return [{ start: m.index, end, paragraph: lastPiece.paragraph }];
      }
    }
    return [];
  };

  for (const p of all) {
    if (cur.length === 0) {
      cur = [p];
      fresh = true;
      continue;
    }
    const start = cur[0]!.start;
    let fits = p.end - start <= size;
    // Prefer a paragraph boundary: when the next paragraph will not fit whole and the chunk is half full, end here.
    const prev = cur[cur.length - 1]!;
    if (fits && p.paragraph !== prev.paragraph && fresh) {
      const paraEnd = paragraphEnds[p.paragraph]!;
      if (paraEnd - start > size && prev.end - start >= size / 2) fits = false;
    }
    if (fits) {
      cur.push(p);
      fresh = true;
      continue;
    }
    emit();
    cur = [...carry(cur, p), p];
    fresh = true;
  }
  if (cur.length && fresh) emit();
  return chunks;
}
