import type { Frame } from '../frames.ts';
import { assistantTurn, type AssistantTurn } from '../assistant-turn.ts';
import { sameWords } from '../turn/endpointing.ts';

/** What preparing a reply needs from the session. */
export interface PreparedHost {
  now(): number;
  /** The session's current reply (the prepared one while there is one). */
  current(): AssistantTurn | null;
  setCurrent(t: AssistantTurn | null): void;
  /** Nothing is playing and no reply is being made: a reply may be prepared. */
  idle(): boolean;
  newTurnId(): string;
  /** Into the reply pipeline (user-turn to start one, interrupt to cancel one). */
  push(frame: Frame): void;
  /** Turns a confirmed reply's held frames into output, in order. */
  output(frame: Frame): void;
}

export interface DropReasons {
  wentOn: number;
  wordsChanged: number;
  finalDiffers: number;
}

export interface PreparedStats {
  confirmed: number;
  dropped: number;
  llmChars: number;
  ttsChars: number;
  droppedBy?: DropReasons;
}

/**
 * Preemptive replies: when the caller goes quiet, the reply to what they said so far is started (LLM, first TTS)
 * with its output held. When the turn is confirmed with the same words, the held frames play and the reply goes on
 * as usual; when the caller goes on, or the final transcript says something else, it is cancelled: nothing of it is
 * played, stored in history or the trace, or billed (only what a vendor reported as usage before the cancel).
 * The counts go to the session's metrics.
 */
export class PreparedReplies {
  readonly stats: PreparedStats = {
    confirmed: 0,
    dropped: 0,
    llmChars: 0,
    ttsChars: 0,
    /**
     * Why replies were dropped (issue 25, for tuning against a lagging STT): the caller went on (or the words
     * turned out unfinished), a newer transcript said other words before the endpoint, or the final did at it.
     */
    droppedBy: { wentOn: 0, wordsChanged: 0, finalDiffers: 0 },
  };

  constructor(private readonly host: PreparedHost) {}

  /** The reply being prepared, if any (a held `say`, which answers nobody, is not one: see ReplyStage). */
  get pending(): AssistantTurn | null {
    const t = this.host.current();
    return t?.held && !t.closed && t.userText !== '' ? t : null;
  }

  /** Prepares the reply to `text` (or keeps the one already prepared for the same words). */
  prepare(text: string): void {
    const p = this.pending;
    if (p && sameWords(p.userText, text)) return;
    this.drop('wordsChanged');
    if (!this.host.idle()) return;
    const t = assistantTurn(this.host.newTurnId(), -1, this.host.now(), {
      userText: text,
      lastSpeechAt: null,
      endpointAt: null,
    });
    t.held = [];
    this.host.setCurrent(t);
    this.host.push({ kind: 'user-turn', text, lastSpeechMs: 0, sttMs: 0, turnId: t.id });
  }

  /**
   * The caller's turn is confirmed as `text`: the prepared reply, when it answers the same words, becomes the
   * session's reply (`turn` fills in its trace fields) and its held audio plays. Otherwise it is dropped; false.
   */
  confirm(text: string, turn: Partial<AssistantTurn>): boolean {
    const p = this.pending;
    if (!p || !sameWords(p.userText, text)) {
      this.drop('finalDiffers');
      return false;
    }
    Object.assign(p, turn, { userText: text });
    const frames = p.held!;
    p.held = null;
    this.stats.confirmed++;
    for (const f of frames) this.host.output(f);
    return true;
  }

  /** Cancels the prepared reply, if any: its LLM and TTS work stop, its frames are thrown away. */
  drop(why: keyof DropReasons = 'wentOn'): void {
    const t = this.pending;
    if (!t) return;
    if (this.stats.droppedBy) this.stats.droppedBy[why]++;
    t.closed = true;
    this.host.setCurrent(null);
    // Its work is cancelled; nothing of it was heard, so playback goes on untouched.
    this.host.push({ kind: 'interrupt', atMs: this.host.now(), reason: 'prepared_reply_dropped', flush: false });
    this.stats.dropped++;
    this.stats.llmChars += t.llmChars;
    for (const f of t.held!) if (f.kind === 'tts-audio' && f.last) this.stats.ttsChars += f.text.length;
  }
}
