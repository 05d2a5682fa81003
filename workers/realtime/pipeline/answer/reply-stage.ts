import { PreparedReplies } from './prepared-reply.ts';
import type { Conversation } from '../conversation.ts';
import { isSystemFrame, type DataFrame, type SpokenTurn, type SystemFrame } from '../frames.ts';
import { Stage } from '../stage.ts';

/**
 * What the caller said → what the agent answers: `utterance` and `keypad` become the user's trace row and a reply
 * (`user-turn` to the LLM, after the history it answers from), `prepare`/`unprepare` start and drop a preemptive
 * reply (pipeline/answer/prepared-reply.ts), `say` opens a fixed-text reply. A new reply takes the floor: the one before
 * it is closed when it has played out, else cut (`interrupt` new_turn, the playback stage keeps what was heard).
 */
export class ReplyStage extends Stage {
  private readonly prepared: PreparedReplies;
  /** Held frames of a prepared reply being confirmed, released together to the playback stage. */
  private released: DataFrame[] | null = null;

  constructor(private readonly conv: Conversation) {
    super('reply', { sync: true });
    this.prepared = new PreparedReplies({
      now: () => conv.now(),
      current: () => conv.current,
      setCurrent: (t) => (conv.current = t),
      idle: () => !conv.agentActive && (conv.current === null || conv.current.closed),
      newTurnId: () => conv.newTurnId(),
      push: (f) => this.emit(f),
      output: (f) => this.released?.push(f as DataFrame),
    });
  }

  /** Replies prepared before the endpoint: played, and dropped with what they had cost. */
  get preparedStats(): PreparedReplies['stats'] {
    return this.prepared.stats;
  }

  protected override onData(frame: DataFrame): void {
    switch (frame.kind) {
      case 'utterance':
        return this.spoke(frame);
      case 'keypad':
        return this.keypad(frame.digits, frame.atMs);
      case 'prepare':
        // Until someone is known to be there (answering-machine detection), nothing is prepared.
        return this.conv.holding ? undefined : this.prepared.prepare(frame.text);
      case 'unprepare':
        return this.prepared.drop();
      case 'say':
        return this.say(frame);
      case 'play-held':
        return this.playHeld();
      default:
        this.emit(frame);
    }
  }

  protected override onSystem(frame: SystemFrame): void {
    if (frame.kind === 'end') this.prepared.drop();
  }

  /** The caller finished an utterance: its user turn row, and the reply to it when something was said. */
  private spoke(u: SpokenTurn): void {
    this.emit({
      kind: 'turn-done',
      record: {
        idx: this.conv.nextIdx(),
        speaker: 'user',
        text: u.text,
        startMs: u.onsetAt,
        endMs: u.lastSpeechAt,
        sttMs: Math.max(0, u.finalAt - u.lastSpeechAt),
        ...(u.sttEngine ? { sttEngine: u.sttEngine } : {}),
      },
    });
    // Until someone is known to be there (or while a machine talks), speech is not a turn for the agent; nor is
    // speech that ended before it was known, whose final came late.
    if (!u.text || this.conv.heldSpeech(u.lastSpeechAt)) return;
    this.userTurn(u.text, u.lastSpeechAt, u.endpointAt, u.endpointWaitMs);
    if (this.conv.current) this.conv.current.vadLagMs = u.vadLagMs;
  }

  private keypad(digits: string, at: number): void {
    this.emit({
      kind: 'turn-done',
      record: { idx: this.conv.nextIdx(), speaker: 'user', text: `DTMF ${digits}`, startMs: at, endMs: at, sttMs: 0 },
    });
    this.userTurn(`The caller pressed the keypad keys: ${digits.split('').join(' ')}`, at, at, 0);
  }

  private userTurn(text: string, lastSpeechAt: number, endpointAt: number, endpointWaitMs: number): void {
    // A reply prepared while the caller was quiet, when it answers what they said, plays from here.
    const idx = this.conv.pendingIdx;
    this.released = [];
    const confirmed = this.prepared.confirm(text, { idx, lastSpeechAt, endpointAt, endpointWaitMs });
    const frames = this.released;
    this.released = null;
    if (confirmed) {
      this.conv.nextIdx();
      if (frames.length) this.emit({ kind: 'release', turnId: this.conv.current!.id, frames });
      return;
    }
    this.takeFloor();
    const t = this.conv.newTurn(text, lastSpeechAt, endpointAt);
    t.endpointWaitMs = endpointWaitMs;
    this.emit({ kind: 'user-turn', text, lastSpeechMs: lastSpeechAt, sttMs: 0, turnId: t.id });
  }

  /** Speaks a fixed text as its own reply (greeting, goodbye, voicemail message…). */
  private say(f: Extract<DataFrame, { kind: 'say' }>): void {
    this.prepared.drop();
    this.takeFloor();
    const t = this.conv.newTurn('', null, null);
    // Its text is known; it is done (llmDone) when its llm-done has followed its audio to playback, so a first
    // sentence played back before the next one is sent does not close it.
    t.fullText = f.text.trim();
    if (f.hold) t.held = [];
    this.emit({ ...f, turnId: t.id });
  }

  /**
   * The held `say` plays: what playback holds of it goes out at once (a `release` overtakes the queues), and what
   * synthesis has still to make plays as it comes. Nothing when it was replaced or closed meanwhile.
   */
  private playHeld(): void {
    const t = this.conv.current;
    if (!t?.held || t.closed || t.userText !== '') return;
    const frames = t.held.filter((f): f is DataFrame => !isSystemFrame(f));
    t.held = null;
    this.emit({ kind: 'release', turnId: t.id, frames });
  }

  /** The reply before a new one: played out (marks back, or past the estimate), a finished turn; else a cut. */
  private takeFloor(): void {
    const cur = this.conv.current;
    if (!cur || cur.closed) return;
    if (cur.llmDone && !this.conv.playback.speaking) {
      const closed = this.conv.closeTurn(cur, false);
      if (closed) this.emit({ kind: 'turn-done', ...closed });
    } else {
      this.emit({ kind: 'interrupt', atMs: this.conv.now(), reason: 'new_turn', onsetAt: null, flush: true });
    }
  }
}
