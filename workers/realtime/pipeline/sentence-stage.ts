import type { DataFrame } from './frames.ts';
import { Stage } from './stage.ts';

/** A sentence ends at . ! ? … (optionally followed by quotes/brackets) then whitespace; a newline also ends one. */
const BOUNDARY = /([.!?…]+["'”’)\]]*\s+|\n+)/;
/** Very short fragments ("Dr.", "1.") wait for more text so they are not spoken alone. */
const MIN_CHARS = 12;
/** Longest first chunk of a reply, in words, when no sentence or clause ends sooner. */
const FIRST_CHUNK_WORDS = 12;

/**
 * LLM text deltas → sentences, so that synthesis starts on the first sentence while the LLM is still writing.
 * Other frames pass through in order.
 */
export class SentenceStage extends Stage {
  private buf = '';
  private turnId = '';
  private index = 0;

  constructor() {
    super('sentences');
  }

  protected override onData(frame: DataFrame): void {
    if (frame.kind === 'llm-text') {
      if (frame.turnId !== this.turnId) this.reset(frame.turnId);
      this.buf += frame.text;
      for (;;) {
        const m = BOUNDARY.exec(this.buf);
        if (!m || m.index === undefined) break;
        const end = m.index + m[0].length;
        const sentence = this.buf.slice(0, end).trim();
        if (sentence.length < MIN_CHARS && end < this.buf.length) {
          // Too short to speak alone: look for the next boundary after it.
          const rest = BOUNDARY.exec(this.buf.slice(end));
          if (!rest || rest.index === undefined) break;
          const end2 = end + rest.index + rest[0].length;
          this.out(this.buf.slice(0, end2).trim(), false);
          this.buf = this.buf.slice(end2);
          continue;
        }
        if (sentence.length < MIN_CHARS) break;
        this.out(sentence, false);
        this.buf = this.buf.slice(end);
      }
      if (this.index === 0) this.firstChunk();
      return;
    }
    if (frame.kind === 'llm-done') {
      if (frame.turnId !== this.turnId) this.reset(frame.turnId);
      const rest = this.buf.trim();
      this.buf = '';
      this.emit({ kind: 'sentence', turnId: this.turnId, index: this.index++, text: rest, last: true });
      this.emit(frame);
      return;
    }
    this.emit(frame);
  }

  protected override onSystem(): void {
    this.buf = '';
  }

  /**
   * The first words of a reply are what the caller waits for: before the first sentence ends, speak up to a clause
   * boundary (", " "; " ": " after 20 characters) or the first FIRST_CHUNK_WORDS words, whichever comes first.
   */
  private firstChunk(): void {
    const clause = /^.{20,}?[,;:]\s/.exec(this.buf);
    if (clause) {
      this.out(clause[0].trim(), false);
      this.buf = this.buf.slice(clause[0].length);
      return;
    }
    const m = new RegExp(`^(\\S+\\s+){${FIRST_CHUNK_WORDS}}`).exec(this.buf);
    if (m) {
      this.out(m[0].trim(), false);
      this.buf = this.buf.slice(m[0].length);
    }
  }

  private reset(turnId: string): void {
    this.turnId = turnId;
    this.buf = '';
    this.index = 0;
  }

  private out(text: string, last: boolean): void {
    if (text) this.emit({ kind: 'sentence', turnId: this.turnId, index: this.index++, text, last });
  }
}
