import { cancels, type DataFrame, type SystemFrame } from '../frames.ts';
import { Stage } from '../stage.ts';

/** A sentence ends at . ! ? … (optionally followed by quotes/brackets) then whitespace; a newline also ends one. */
const BOUNDARY = /([.!?…]+["'”’)\]]*\s+|\n+)/;
/** Very short fragments ("Dr.", "1.") wait for more text so they are not spoken alone. */
const MIN_CHARS = 12;
/**
 * The first chunk of a reply is spoken before its sentence ends (the caller is waiting for it): at a phrase boundary
 * once it has FIRST_CHUNK_MIN_WORDS words, and at FIRST_CHUNK_MAX_WORDS words at the latest. At 60 tokens/s each
 * word waited for costs ~17 ms of the turn's latency: three words before a phrase boundary ("We are open | from…")
 * still read as a phrase, and eight cost 130 ms of LLM time and ~35 ms of flite time.
 */
const FIRST_CHUNK_MIN_WORDS = 3;
const FIRST_CHUNK_MAX_WORDS = 8;
/** Words that open a new phrase, so a pause before them sounds natural. */
const PHRASE_START = new Set(
  'and but or so because until from in on at with for when while which if after before since unless where then'.split(
    ' ',
  ),
);
/**
 * An opener of one or two words closed by a comma ("Sure,", "Of course,", "Well,"): said alone it sounds as people
 * say it, with a pause after, and the caller hears it one LLM token after the first.
 */
const OPENER = /^\S+(?:\s\S+)?[,;:]\s/;
/** Complete words: a word counts once the whitespace after it has arrived. */
const COMPLETE_WORD = /\s*(\S+)\s+/y;

/**
 * LLM text deltas → sentences, so that synthesis starts on the first sentence while the LLM is still writing. A
 * `say` is split the same way, as if the model had written it at once, and closed with its `llm-done`.
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
    if (frame.kind === 'say' && frame.turnId) {
      this.onData({ kind: 'llm-text', turnId: frame.turnId, text: frame.text.trim() + ' ' });
      this.onData({ kind: 'llm-done', turnId: frame.turnId, llmMs: 0 });
      return;
    }
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

  protected override onSystem(frame: SystemFrame): void {
    // A cancelled reply's text is dropped; notifications passing by (marks, usage, transcripts) leave it be.
    if (cancels(frame)) this.buf = '';
  }

  /**
   * The first words of a reply are what the caller waits for: before the first sentence ends, speak an opener
   * ("Sure,"), or up to a clause boundary (", " "; " ": " after 20 characters) or the first phrase boundary (see
   * FIRST_CHUNK_MIN_WORDS), whichever comes first.
   */
  private firstChunk(): void {
    const clause = OPENER.exec(this.buf) ?? /^.{20,}?[,;:]\s/.exec(this.buf);
    if (clause) {
      this.out(clause[0].trim(), false);
      this.buf = this.buf.slice(clause[0].length);
      return;
    }
    const words: string[] = [];
    const ends: number[] = [];
    COMPLETE_WORD.lastIndex = 0;
    for (let m = COMPLETE_WORD.exec(this.buf); m; m = COMPLETE_WORD.exec(this.buf)) {
      words.push(m[1]!);
      ends.push(COMPLETE_WORD.lastIndex);
      if (words.length > FIRST_CHUNK_MAX_WORDS) break;
    }
    for (let i = FIRST_CHUNK_MIN_WORDS; i <= Math.min(FIRST_CHUNK_MAX_WORDS, words.length); i++) {
      const nextOpensPhrase = i < words.length && PHRASE_START.has(bareWord(words[i]!));
      if (i === FIRST_CHUNK_MAX_WORDS || nextOpensPhrase) {
        const end = ends[i - 1]!;
        this.out(this.buf.slice(0, end).trim(), false);
        this.buf = this.buf.slice(end);
        return;
      }
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

function bareWord(word: string): string {
  return word.toLowerCase().replace(/[^\p{L}]+/gu, '');
}
