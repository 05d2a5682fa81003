import type { LimitEndReason } from '../../../../shared/contracts/end-reasons.ts';
import type { Conversation } from '../conversation.ts';
import type { DataFrame, SystemFrame } from '../frames.ts';
import { Stage } from '../stage.ts';

/** What the stage needs of the call's limits (call/call-limits.ts): the reservation ahead and the goodbye. */
export interface ReplyLimits {
  beforeReply(): Promise<LimitEndReason | null>;
  readonly goodbye: string;
}

/**
 * user-turn → user-turn, once what the reply will use is reserved (per-call and daily caps, the balance). When a
 * limit stops it, the turn that would have answered says the goodbye instead (its text as the LLM's would be, so
 * the trace row holds it), an `end-call` with the reason follows (it ends the call once the goodbye has played), and
 * `limit-reached` tells the session at once; later user turns are not answered. A prepared reply (its output held)
 * runs ahead once funded; its reservation is checked again when the reply stage confirms it (`release`), and a limit then goes to
 * the session as `limit-reached` without `answered`, which cuts the reply and says the goodbye from the head.
 * (Its LLM starts only once the reply is funded: `prepared`.)
 */
export class LimitStage extends Stage {
  private reached = false;

  constructor(
    private readonly conv: Pick<Conversation, 'turn' | 'current'>,
    private readonly limits: ReplyLimits,
  ) {
    super('limits');
  }

  protected override async onData(frame: DataFrame, signal: AbortSignal): Promise<void> {
    if (frame.kind !== 'user-turn') return this.emit(frame);
    if (this.reached) return;
    if (this.conv.turn(frame.turnId)?.held) return this.prepared(frame, signal);
    const stop = await this.limits.beforeReply();
    // Superseded while it was checked (a newer turn, a barge-in, the end): nothing of it goes on.
    if (signal.aborted || this.reached) return;
    if (!stop) return this.emit(frame);
    this.answerWithGoodbye(frame.turnId, stop);
  }

  /** The turn that would have answered says the goodbye instead, and the call ends once it has played. */
  private answerWithGoodbye(turnId: string, stop: LimitEndReason): void {
    this.reached = true;
    this.emit({ kind: 'limit-reached', reason: stop, answered: true });
    this.emit({ kind: 'llm-text', turnId, text: this.limits.goodbye + ' ' });
    this.emit({ kind: 'llm-done', turnId, llmMs: 0 });
    this.emit({ kind: 'end-call', reason: stop });
  }

  /**
   * A prepared reply's LLM costs what any reply's does, so it starts only when that reply is funded: unchecked, its
   * tokens were charged past the cap. A limit found here ends the call as one found at the release does (no reply
   * was started, so nothing is cut).
   */
  private async prepared(frame: DataFrame, signal: AbortSignal): Promise<void> {
    const stop = await this.limits.beforeReply();
    if (signal.aborted || this.reached) return;
    if (!stop) return this.emit(frame);
    if (frame.kind === 'user-turn' && this.conv.turn(frame.turnId)?.held === null) {
      // Confirmed while it was checked (the caller's final came before the reservation's answer, as on a loaded
      // machine): it is the session's reply now, and nothing of it will play (its LLM never started), so it says
      // the goodbye as any turn stopped here does. Sent as `answered: false`, the session waited for this reply's
      // end to say the goodbye, and the call hung open and silent.
      return this.answerWithGoodbye(frame.turnId, stop);
    }
    this.reached = true;
    this.emit({ kind: 'limit-reached', reason: stop, answered: false });
  }

  protected override onSystem(frame: SystemFrame): boolean | void {
    if (frame.kind !== 'release' || this.reached) return;
    // A held `say` (the voicemail message) is a fixed text, reserved for like any `say`: not a reply.
    if (this.conv.current?.id === frame.turnId && this.conv.current.userText === '') return;
    // The prepared reply's LLM already ran; the reservation still decides whether the call goes on after it.
    void this.limits.beforeReply().then((stop) => {
      if (!stop || this.reached) return;
      this.reached = true;
      this.emit({ kind: 'limit-reached', reason: stop, answered: false });
    });
  }
}
