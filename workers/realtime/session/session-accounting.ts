import { sessionMinuteHold } from '../../../shared/billing/session-hold.ts';
import type { Reservation } from '../../../shared/billing/types.ts';
import { sessionMetrics } from './assistant-turn.ts';
import type { PreparedReplies } from './prepared-reply.ts';
import type { InterruptionRecord, TraceStore, TurnRecord } from './trace-store.ts';
import type { SessionInit, SessionTransport } from './types.ts';
import { settleEngineUsage } from './usage.ts';

/** What the books read of a session: who pays, which engines and keys served it, where its trace goes. */
export type AccountingInit = Pick<
  SessionInit,
  'infra' | 'sessionId' | 'developerId' | 'agent' | 'runtime' | 'engines' | 'trace' | 'log'
> & { transport: Pick<SessionTransport, 'channel'> };

/**
 * A session's books, kept apart from its turn-taking: the minute hold taken at start, the usage counted as the call
 * goes, the trace rows written on the way and, at the end, the summary metrics and the charges. CallSession says
 * what happened; this records it and bills it.
 */
export class SessionAccounting {
  private hold: Reservation | null = null;
  private readonly usage = { ttsChars: 0, llmTokens: 0, interruptions: 0, tools: 0 };
  /** The turn rows written, kept for the summary metrics (turn count, average latency). */
  private readonly turns: TurnRecord[] = [];
  /** Trace writes in flight: the end waits for them so the session row is written after its turns. */
  private readonly writes: Promise<unknown>[] = [];

  /**
   * `sttAudioSeconds` reads the caller audio sent to STT, which the STT stage counts: read when the metrics and the
   * charges are made, not copied earlier, so both see the count as it stands at the end.
   */
  constructor(
    private readonly s: AccountingInit,
    private readonly sttAudioSeconds: () => number,
  ) {}

  /**
   * Credit pre-check: holds the first minute, so an empty balance is refused (`insufficient_credits`) before the
   * caller hears anything. Settled to the real length by `settle`.
   */
  async holdFirstMinute(): Promise<void> {
    const { infra, developerId, sessionId, transport } = this.s;
    this.hold = await infra.meter.reserve(sessionMinuteHold(developerId, sessionId, transport.channel));
  }

  /** TTS characters a vendor synthesized (cache hits cost nothing and are not counted). */
  ttsChars(n: number): void {
    this.usage.ttsChars += n;
  }

  /** LLM tokens (input + output) a vendor reported. */
  llmTokens(n: number): void {
    this.usage.llmTokens += n;
  }

  /** A turn row. Kept for the metrics even when its write fails: they count what was said, not what was stored. */
  record(turn: TurnRecord): void {
    this.turns.push(turn);
    this.write(this.s.trace.turn(turn));
  }

  /** A tool the LLM ran during turn `turnIdx`. */
  tool(turnIdx: number, rec: Parameters<TraceStore['tool']>[1]): void {
    this.usage.tools++;
    this.write(this.s.trace.tool(turnIdx, rec));
  }

  /** A barge-in, for the metrics and the interruption-quality report (a reply superseded by a new turn is none). */
  interruption(rec: InterruptionRecord): void {
    this.usage.interruptions++;
    this.write(this.s.trace.interruption(this.s.developerId, this.s.agent.id, rec));
  }

  /** A trace write to wait for at the end; a failed one is logged, never thrown (the call goes on without it). */
  write(p: Promise<unknown>): void {
    this.writes.push(
      p.catch((e: Error) => this.s.log.error({ err: e.message, sessionId: this.s.sessionId }, 'trace write failed')),
    );
  }

  /** Resolves when the trace writes made so far are done (each has caught its own failure). */
  flush(): Promise<unknown> {
    return Promise.all(this.writes);
  }

  /** The summary metrics stored on the session row: the counts so far and the prepared replies' own. */
  metrics(durationMs: number, prepared: PreparedReplies['stats']): ReturnType<typeof sessionMetrics> {
    return sessionMetrics(this.turns, {
      durationMs,
      toolExecutions: this.usage.tools,
      interruptions: this.usage.interruptions,
      sttAudioSeconds: this.sttAudioSeconds(),
      ttsCharacters: this.usage.ttsChars,
      llmTokens: this.usage.llmTokens,
      prepared,
    });
  }

  /**
   * Meters the session: commits the minute hold at the minutes connected (at least one), then the engines' own
   * usage. Never throws: the call is over either way, and a charge that failed is logged.
   */
  settle(durationMs: number): Promise<void> {
    return this.charge(durationMs).catch((e: Error) =>
      this.s.log.warn({ err: e.message, sessionId: this.s.sessionId }, 'session metering failed'),
    );
  }

  private async charge(durationMs: number): Promise<void> {
    await this.hold?.commit(Math.max(1, Math.ceil(durationMs / 60_000)));
    await settleEngineUsage(this.s.infra.meter, {
      developerId: this.s.developerId,
      sessionId: this.s.sessionId,
      engines: this.s.engines,
      llm: { provider: this.s.runtime.provider, billable: this.s.runtime.key.billable },
      sttAudioSeconds: this.sttAudioSeconds(),
      ttsChars: this.usage.ttsChars,
      llmTokens: this.usage.llmTokens,
    });
  }
}
