import type { TranscriptSegment, TranscriptWord } from './types.ts';

export interface DecodedSegment extends TranscriptSegment {
  words: TranscriptWord[];
  /** Mean word posterior (0-1) reported by the decoder. */
  confidence: number;
}

/** Tokens pocketsphinx emits for silence, sentence bounds and noise: never words of the transcript. */
const NON_WORD = /^(<s>|<\/s>|<sil>|\[[A-Z_]+\]|\+\+.*\+\+|\+.*\+)$/;

const WORD_LINE = /^(\S+) (-?\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?) (-?[\d.]+(?:e[-+]?\d+)?)$/;

/**
 * Reads `pocketsphinx_continuous -time yes` output line by line: per utterance a hypothesis line, then one
 * `word start end posterior` line per token, opened by `<s>` and closed by `</s>`. An utterance is complete at its
 * `</s>` (or when the next one starts, or at the end), so a caller reading the decoder's output as it is written
 * gets each utterance as soon as the decoder has printed it. Alternate pronunciations (`read(2)`) lose their
 * suffix; fillers and silences are dropped; utterances without words are dropped. `offset` (seconds) is added to
 * every time, for audio decoded in pieces.
 */
export class PocketsphinxOutputParser {
  private current: { words: TranscriptWord[]; conf: number[] } | null = null;

  constructor(private readonly offset = 0) {}

  /** Feeds one line; returns the utterance it completed, if any. */
  line(line: string): DecodedSegment | null {
    const m = WORD_LINE.exec(line.trim());
    if (!m) return this.close(); // a hypothesis line starts the next utterance
    const token = m[1]!;
    const closed = token === '<s>' ? this.close() : null;
    this.current ??= { words: [], conf: [] };
    if (token === '</s>') return this.close();
    if (NON_WORD.test(token)) return closed;
    this.current.words.push({
      word: token.replace(/\(\d+\)$/, ''),
      start: round(this.offset + +m[2]!),
      end: round(this.offset + +m[3]!),
    });
    this.current.conf.push(Math.min(1, Math.max(0, +m[4]!)));
    return closed;
  }

  /** The output has ended: the utterance still open, if it has words. */
  end(): DecodedSegment | null {
    return this.close();
  }

  private close(): DecodedSegment | null {
    const c = this.current;
    this.current = null;
    if (!c || c.words.length === 0) return null;
    const w = c.words;
    return {
      start: w[0]!.start,
      end: w[w.length - 1]!.end,
      text: w.map((x) => x.word).join(' '),
      words: w,
      confidence: round(c.conf.reduce((a, b) => a + b, 0) / c.conf.length),
    };
  }
}

/** The whole output at once (see PocketsphinxOutputParser). */
export function parsePocketsphinxOutput(out: string, offset = 0): DecodedSegment[] {
  const parser = new PocketsphinxOutputParser(offset);
  const segments: DecodedSegment[] = [];
  for (const line of out.split('\n')) {
    const s = parser.line(line);
    if (s) segments.push(s);
  }
  const last = parser.end();
  if (last) segments.push(last);
  return segments;
}

export function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
