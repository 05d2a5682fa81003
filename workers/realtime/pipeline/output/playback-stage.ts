import { observeTurnStages, suspectCutIn, type AssistantTurn } from '../assistant-turn.ts';
import type { StereoRecorder } from './recorder.ts';
import type { Conversation } from '../conversation.ts';
import type { DataFrame, SystemFrame } from '../frames.ts';
import { Stage } from '../stage.ts';
import type { HeldAudio } from '../playback.ts';

/** A tentative stop in progress: what was taken off the line, what came since, and what the caller had heard. */
interface Hold {
  atMs: number;
  onsetAt: number | null;
  /** Session time the far end was flushed (the agent fell silent). */
  stoppedAt: number;
  audio: HeldAudio;
  frames: DataFrame[];
  heard: string[];
  heardAtOnset: number;
  turnId: string | null;
}

/** How often a pending `end-call`/`transfer` checks whether the audio before it has played (marks also check). */
const DRAIN_CHECK_MS = 100;

/**
 * tts-audio → the transport (through `conversation.playback`: 20 ms frames, a mark after each sentence, an end mark
 * after a complete reply's last one (`<turn>:end`: a far end knows the reply has played when it comes back), `clear`).
 * A reply cut by a barge-in gets no end mark after the cut (its flushed one, if sent, is echoed by the far end's
 * flush): the caller's speech that cut it is a turn of its own, whose reply ends with one.
 * Closes replies: when all of a reply has played (marks back), when a barge-in cuts it (`interrupt`: playback
 * flushed, the recording's agent side cut, the reply stored as what was heard, the barge-in recorded), or when the
 * call ends; each closed reply goes on as a `turn-done` frame. Holds the output of a prepared reply until the reply
 * stage confirms it (`release`). `end-call` and `transfer` go on once the audio queued before them has played.
 */
export class PlaybackStage extends Stage {
  private pendingEnd: DataFrame | null = null;
  private hold: Hold | null = null;
  private drainTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly conv: Conversation,
    private readonly recorder: StereoRecorder | null,
  ) {
    super('playback', { sync: true });
  }

  private get playback() {
    return this.conv.playback;
  }

  protected override onData(frame: DataFrame): void {
    if (frame.kind === 'tts-audio' || frame.kind === 'llm-done') return this.output(frame);
    if (frame.kind === 'end-call' || frame.kind === 'transfer') return this.afterDrain(frame);
    this.emit(frame);
  }

  protected override onSystem(frame: SystemFrame): boolean | void {
    switch (frame.kind) {
      case 'mark':
        this.onMark(frame.name);
        return false;
      case 'release':
        for (const f of frame.frames) this.output(f);
        return false;
      case 'clear':
        this.flush();
        return;
      case 'interrupt':
        if (frame.flush === false) return; // a prepared reply's work: nothing of it was heard
        return this.interrupt(frame);
      case 'hold-playback':
        this.holdPlayback(frame.atMs, frame.onsetAt);
        return false;
      case 'resume-playback':
        this.resumePlayback();
        return false;
      case 'end':
        this.end();
        return;
    }
  }

  private output(f: DataFrame): void {
    if (f.kind !== 'tts-audio' && f.kind !== 'llm-done') return;
    const t = this.conv.turn(f.turnId);
    if (!t || t.closed) return;
    if (this.hold) {
      this.hold.frames.push(f);
      return;
    }
    if (t.held) {
      t.held.push(f);
      return;
    }
    if (f.kind === 'tts-audio') {
      if (f.pcm.length) {
        if (t.firstSendAt === null) this.firstSend(t);
        this.playback.sendAudio(f.pcm);
      }
      if (f.last) {
        const startMs = this.playback.nextStartMs();
        if (f.text.trim()) {
          this.playback.endSentence(t.id, f.sentence, f.text, startMs);
          if (!f.cached) this.emit({ kind: 'usage', category: 'tts', units: f.text.length });
          if (t.userText) t.fullText += (t.fullText ? ' ' : '') + f.text;
        }
      }
      return;
    }
    t.llmDone = true;
    if (f.error) t.error ??= f.error;
    // The reply is complete (every sentence was sent before this frame): its end mark goes out behind them.
    this.playback.endReply(t.id);
    this.emit({ kind: 'agent-done', turnId: t.id, text: t.fullText });
    // Nothing (left) to play: a failed turn, or a transport that echoes no marks.
    if (!this.playback.speaking) this.close(t, false);
  }

  private firstSend(t: AssistantTurn): void {
    t.firstSendAt = this.conv.now();
    this.emit({ kind: 'agent-speaking', turnId: t.id });
    observeTurnStages(t);
  }

  private onMark(name: string): void {
    const s = this.playback.onMark(name);
    if (s) {
      const t = this.conv.current;
      if (t && t.id === s.turnId && t.llmDone && this.playback.turnPlayed(t.id)) this.close(t, false);
    }
    if (this.pendingEnd) this.checkDrained();
  }

  /**
   * A tentative stop: the agent falls silent now (the far end flushed, the recording's agent side cut) and what it
   * had still to say is kept, with what its reply goes on making, until the caller's speech is decided.
   */
  private holdPlayback(atMs: number, onsetAt: number | null): void {
    if (this.hold) return;
    const t = this.conv.current;
    const heard = t && !t.closed ? this.playback.heardWords(t.id, atMs) : [];
    const heardAtOnset = t && !t.closed ? this.playback.heardWords(t.id, onsetAt ?? atMs).length : 0;
    const audio = this.playback.hold();
    this.recorder?.cutAgent();
    const turnId = t && !t.closed ? t.id : null;
    this.hold = { atMs, onsetAt, stoppedAt: this.conv.now(), audio, frames: [], heard, heardAtOnset, turnId };
    this.emit({ kind: 'clear', atMs });
  }

  /** No words came: the agent goes on from where it stopped, and with what its reply made meanwhile. */
  private resumePlayback(): void {
    const h = this.hold;
    if (!h) return;
    this.hold = null;
    const t = this.conv.current;
    const same = t && !t.closed && t.id === h.turnId;
    // A reply complete before the stop had its end mark flushed with the rest: it goes out again behind the replay
    // (one completed during the stop sends its own, from its held `llm-done`).
    const ended = same && t.llmDone;
    this.playback.resume(same ? h.audio : { pieces: [] });
    if (same) for (const f of h.frames) this.output(f);
    if (ended) this.playback.endReply(t.id);
    if (t && same && t.llmDone && !this.playback.speaking) this.close(t, false);
    if (this.pendingEnd) this.checkDrained();
  }

  /** Barge-in (or a superseding turn): flush playback, keep tool results, truncate the reply to what was heard. */
  private interrupt(f: Extract<SystemFrame, { kind: 'interrupt' }>): false {
    const t = this.conv.current;
    // After a tentative stop the agent fell silent then: the barge-in is timed, and heard, from there.
    const h = this.hold;
    this.hold = null;
    const decidedAt = h ? h.atMs : f.atMs;
    const onsetAt = f.onsetAt ?? h?.onsetAt ?? decidedAt;
    const heardAtOnset = h ? h.heardAtOnset : t ? this.playback.heardWords(t.id, onsetAt).length : 0;
    const heard = h ? h.heard : t ? this.playback.heardWords(t.id, decidedAt) : [];
    this.flush();
    // The LLM and TTS stages upstream were cancelled by this frame on its way here.
    const stopMs = (h ? h.stoppedAt : this.conv.now()) - decidedAt;
    this.emit({ kind: 'clear', atMs: decidedAt });
    this.emit(f);
    if (!t || t.closed) return false;
    // Issue 25: caller speech that began within CUT_IN_WINDOW_MS of the reply's first audio (cut-in rate per agent).
    if (f.onsetAt != null) suspectCutIn(t, f.onsetAt);
    this.close(t, true, heard.join(' '));
    if (f.reason === 'new_turn') return false;
    this.emit({
      kind: 'interruption',
      record: {
        turnIdx: t.idx,
        atMs: onsetAt,
        detectionMs: Math.max(0, decidedAt - onsetAt),
        stopMs,
        bleedWords: Math.max(0, heard.length - heardAtOnset),
        reason: f.reason,
      },
    });
    return false;
  }

  /** The far end drops the audio it has queued (marks of flushed sentences will be ignored); so does the recording. */
  private flush(): void {
    this.playback.clear();
    this.recorder?.cutAgent();
  }

  /** The call ends: the reply in progress is stored as what was heard of it (all of it when it played out). */
  private end(): void {
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.pendingEnd = null;
    const t = this.conv.current;
    const h = this.hold;
    this.hold = null;
    if (t && !t.closed) {
      const heard = h ? h.heard : this.playback.heardWords(t.id, this.conv.now());
      const all = !h && !this.playback.speaking && t.llmDone;
      this.close(t, !all, all ? undefined : heard.join(' '));
    }
  }

  private close(t: AssistantTurn, interrupted: boolean, heardText?: string): void {
    const closed = this.conv.closeTurn(t, interrupted, heardText);
    if (closed) this.emit({ kind: 'turn-done', ...closed });
  }

  /** Passes `f` on once the audio queued before it has played (marks back, or past the estimate plus grace). */
  private afterDrain(f: DataFrame): void {
    if (this.pendingEnd) return; // the first one decides
    this.pendingEnd = f;
    this.checkDrained();
  }

  private checkDrained(): void {
    const f = this.pendingEnd;
    if (!f) return;
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = null;
    if (!this.playback.speaking) {
      this.pendingEnd = null;
      this.emit(f);
      return;
    }
    this.drainTimer = setTimeout(() => this.checkDrained(), DRAIN_CHECK_MS);
    this.drainTimer.unref();
  }
}
