import type { LlmMessage } from '../../../shared/engines/llm/types.ts';
import type { AnsweredBy } from '../../../shared/domains/realtime/amd/detector.ts';
import { assistantTurn, assistantTurnRecord, type AssistantTurn } from './assistant-turn.ts';
import type { TurnRecord } from './frames.ts';
import type { Playback } from './playback.ts';

/**
 * What the stages of one call share besides frames (as Pipecat's stages share the LLM context): the history the
 * LLM answers from, the reply being made or played — the one trace object of a turn, on which each stage stamps
 * its times (LLM first token, synthesis start, first audio, first send) — and what the caller has heard
 * (`playback`). The reply stage opens turns and feeds the history, the playback stage closes them with what was
 * heard; the turn stage reads `agentActive` to tell a barge-in from a turn.
 */
export class Conversation {
  /** The conversation so far as the model sees it (without the system prompt). */
  readonly history: LlmMessage[] = [];
  /** The reply being made or played (a prepared one while there is one); null before the first. */
  current: AssistantTurn | null = null;
  /** Trace rows, user and assistant turns alike, are numbered in one sequence. */
  private idx = 0;
  private seq = 0;
  /**
   * Outbound calls with answering-machine detection: who answered, null until known (the answer stage sets it);
   * undefined on other calls.
   */
  answeredBy: AnsweredBy | null | undefined = undefined;
  /** When `answeredBy` was decided (`now()`), null before. */
  answeredAt: number | null = null;

  constructor(
    readonly now: () => number,
    readonly playback: Playback,
    /** The fixed phrases of this call (`say` frames) are cached and reused in this scope (the developer). */
    private readonly phraseScope: string,
  ) {}

  /** The reply a frame belongs to, while it is the current one (frames of a replaced reply are dropped). */
  turn(turnId: string): AssistantTurn | null {
    return this.current?.id === turnId ? this.current : null;
  }

  /** Agent audio is playing or a reply to the caller is being made (a prepared, unconfirmed one aside). */
  get agentActive(): boolean {
    const t = this.current;
    return this.playback.speaking || (t !== null && !t.closed && t.userText !== '' && t.held === null);
  }

  /** Nobody is known to be there yet, or a machine is: caller speech is not a turn for the agent. */
  get holding(): boolean {
    return this.answeredBy === null || this.answeredBy === 'machine';
  }

  /**
   * Whether caller speech that ended at `lastSpeechAt` was heard while holding. A callee's "Hello?" as the call opens
   * is what the answer is decided on (a person: a short greeting, then a pause): its final can come after the
   * decision (a slow STT vendor, a loaded machine) and would then be taken for a turn, cutting the agent's greeting
   * to answer "Hello?". The greeting is the answer to it.
   */
  heldSpeech(lastSpeechAt: number): boolean {
    return this.holding || (this.answeredAt !== null && lastSpeechAt < this.answeredAt);
  }

  /** Agent audio sent but not yet played, for pacing synthesis. */
  queuedAheadMs(): number {
    return this.playback.queuedAheadMs();
  }

  /** The scope a turn's audio may be cached in: fixed phrases (a `say`) only; replies are never cached. */
  cacheScope(turnId: string): string | null {
    return this.turn(turnId)?.userText === '' ? this.phraseScope : null;
  }

  nextIdx(): number {
    return this.idx++;
  }

  /** The idx the next trace row will take (a tool run outside any current reply is filed under it). */
  get pendingIdx(): number {
    return this.idx;
  }

  newTurnId(): string {
    return `t${++this.seq}`;
  }

  /** Opens the reply to `userText` ('' for a `say`) as the current one. */
  newTurn(userText: string, lastSpeechAt: number | null, endpointAt: number | null): AssistantTurn {
    const t = assistantTurn(this.newTurnId(), this.nextIdx(), this.now(), { userText, lastSpeechAt, endpointAt });
    this.current = t;
    return t;
  }

  /**
   * Closes a reply: the history gets the user message, the kept tool calls and what was said (all of it, or what
   * was heard of an interrupted one). Returns its trace row, or null when it was already closed.
   */
  closeTurn(
    t: AssistantTurn,
    interrupted: boolean,
    heardText?: string,
  ): { record: TurnRecord; timing: Record<string, number | null> | null } | null {
    if (t.closed) return null;
    t.closed = true;
    const spoken = interrupted ? (heardText ?? '') : t.fullText;
    this.history.push(...(t.userText ? [{ role: 'user' as const, content: t.userText }] : []), ...t.kept);
    if (spoken) this.history.push({ role: 'assistant', content: spoken });
    this.playback.forget(t.id);
    return assistantTurnRecord(t, { spoken, interrupted, now: this.now() });
  }
}
