import type { LimitEndReason } from '../../../shared/contracts/end-reasons.ts';
import { ApiError, isApiError } from '../../../shared/kernel/errors/api-error.ts';
import { dailyHeadroom } from '../../../shared/domains/billing/spending-caps.ts';
import { creditWeights } from '../../../shared/platform/metering/weights.ts';
import { sessionMetrics } from '../pipeline/assistant-turn.ts';
import type { PreparedReplies } from '../pipeline/answer/prepared-reply.ts';
import type { InterruptionRecord, TurnRecord } from '../pipeline/frames.ts';
import type { TraceStore } from './trace-store.ts';
import type { SessionInit, SessionTransport } from './types.ts';
import { fallbackSttItem, RunningHold, sessionMeterItems, type SessionMeterKind } from './usage.ts';

/** Why a limit ends a call (recorded as the session's end reason: one of the contracts' SessionEndReason). */
export type LimitReason = LimitEndReason;

/** The per-call limits the books enforce (the watcher in call-limits.ts loads them and enforces the duration). */
export interface SpendLimits {
  maxCredits: number | null;
  /** The API key that created the session: its daily cap counts this call too. */
  apiKeyId: string | null;
  /**
   * Characters of the call's closing words (the goodbye a cap says, an outbound call's voicemail message): reserved
   * with every reply, so the reply a cap allows always leaves room for them (issue #33).
   */
  closingChars?: number;
}

/** Speaking rate for the closing words' connected time (about 2.5 words a second). */
const CLOSING_CHARS_PER_SECOND = 15;

/** What one reply is expected to use before its own usage is known (its largest seen so far replaces these). */
export const REPLY_ESTIMATE = {
  /** Connected time a reply takes (speaking it included). */
  seconds: 30,
  sttSeconds: 15,
  ttsChars: 300,
} as const;

/** What a reservation covers: the usage so far plus the next `replies` replies (`reply`), or `aheadMs` of time. */
export interface ReserveOptions {
  reply: boolean;
  /** Replies to hold ahead (default 1); the look-ahead after a reply holds 2 so the next finds its hold in place. */
  replies?: number;
  aheadMs?: number;
}

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
  private readonly usage = { ttsChars: 0, llmTokens: 0, interruptions: 0, tools: 0 };
  /** The turn rows written, kept for the summary metrics (turn count, average latency). */
  private readonly turns: TurnRecord[] = [];
  /** Trace writes in flight: the end waits for them so the session row is written after its turns. */
  private readonly writes: Promise<unknown>[] = [];
  /** One running hold per item, grown ahead of the usage and committed at the end. */
  private readonly holds: Record<SessionMeterKind, RunningHold>;
  private readonly items: ReturnType<typeof sessionMeterItems>;
  private limits: SpendLimits = { maxCredits: null, apiKeyId: null };
  /** Usage when the last reply was reserved, and the largest a reply has used: the next reply's estimate. */
  private atLastReply = { llm: 0, tts: 0, stt: 0 };
  private largestReply = { llm: 0, tts: 0, stt: 0 };
  /** Reservations run one at a time (a minute tick and a reply may ask at once). */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * `sttAudioSeconds` reads the caller audio sent to STT, which the STT stage counts: read when the metrics and the
   * charges are made, not copied earlier, so both see the count as it stands at the end. `sttEngines` reads how much
   * of it engines other than the session's own heard (a fallback after the vendor failed, by provider) and how often
   * the stream switched: the session's STT item is charged only its own engine's seconds, each other engine's are
   * recorded under its own provider (the local recogniser's at 0 credits).
   */
  constructor(
    private readonly s: AccountingInit,
    private readonly sttAudioSeconds: () => number,
    private readonly sttEngines: () => { otherSeconds: Record<string, number>; switches: number } = () => ({
      otherSeconds: {},
      switches: 0,
    }),
  ) {
    this.items = sessionMeterItems(
      s.engines,
      { provider: s.runtime.provider, billable: s.runtime.key.billable },
      s.transport.channel,
      s.infra.config.agentTestPlatform,
    );
    this.holds = this.makeHolds();
  }

  private makeHolds(): Record<SessionMeterKind, RunningHold> {
    const { infra, developerId, sessionId } = this.s;
    const hold = (k: SessionMeterKind) =>
      new RunningHold(infra.meter, () => ({
        developerId,
        requestId: sessionId,
        ...this.items[k],
        ...(this.limits.apiKeyId ? { apiKeyId: this.limits.apiKeyId } : {}),
      }));
    return { minutes: hold('minutes'), stt: hold('stt'), tts: hold('tts'), llm: hold('llm') };
  }

  /** The limits in force; set before the first hold, so that the holds record the session's API key. */
  setLimits(limits: SpendLimits): void {
    this.limits = limits;
  }

  /**
   * Credit pre-check: holds the first minute, so an empty balance is refused (`insufficient_credits`) before the
   * caller hears anything. Grown as the call goes (`reserveAhead`) and settled to the real usage by `settle`.
   *
   * Where the caps and the balance allow it, the same statement also holds the look-ahead of the first two replies,
   * so the first reply's check finds its hold in place. Held later (the look-ahead `arm` starts), the first reply,
   * prepared while the caller still speaks, waited for that look-ahead's three round trips, and at the start of a
   * burst of calls the database is at its busiest: the first response's p95 at 300 calls grew by a third.
   */
  async holdFirstMinute(): Promise<void> {
    // The daily caps too, before the greeting (issue #33): a call they cannot fund is refused now, with the
    // operator's message, rather than greeted and cut at its first reply.
    const needed = this.creditsOf({ minutes: 1, stt: 0, tts: 0, llm: 0 });
    const ahead = this.needed(0, { reply: true, replies: 2 });
    const aheadCredits = this.creditsOf(ahead);
    const headroom =
      aheadCredits > 0 ? await dailyHeadroom(this.s.infra.db, this.s.developerId, this.limits.apiKeyId) : null;
    if (headroom && headroom.remaining < needed)
      throw new ApiError('spending_cap_reached', {
        scope: headroom.scope === 'key' ? 'API key' : 'developer',
        cap: headroom.cap,
        remaining: Math.max(0, headroom.remaining),
        needed,
      });
    const { maxCredits } = this.limits;
    if ((maxCredits === null || aheadCredits <= maxCredits) && (!headroom || headroom.remaining >= aheadCredits)) {
      const kinds: SessionMeterKind[] = ['minutes', ...this.billedKinds().filter((k) => k !== 'minutes')];
      try {
        await RunningHold.coverAll(
          this.s.infra.meter,
          kinds.map((k) => [this.holds[k], ahead[k]]),
        );
        return;
      } catch (e) {
        // The balance covers less than the look-ahead: the first minute alone decides, as it did before.
        if (!isApiError(e) || e.code !== 'insufficient_credits') throw e;
      }
    }
    await this.holds.minutes.cover(1);
  }

  /**
   * Reserves ahead of the usage: everything used so far, plus (`reply`) what the next reply is expected to use, or
   * (`aheadMs`) the connected time until the next check. Returns the limit that stops it — the call's credit cap,
   * a daily cap, or a balance that cannot cover it — or null when the holds now cover it.
   */
  reserveAhead(elapsedMs: number, opts: ReserveOptions): Promise<LimitReason | null> {
    // What is needed is counted when asked. When the holds already cover it (the look-ahead did its work), the answer
    // is given at once, not behind a reservation in flight: a minute tick or a look-ahead waiting on a busy database
    // must not hold up a reply whose credits are already held (the LLM starts with nothing awaited).
    const need = this.needed(elapsedMs, opts);
    const now = this.answeredByHolds(need);
    if (now !== undefined) return Promise.resolve(now);
    const next = this.queue.then(() => this.reserve(need, (opts.replies ?? 1) > 1));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Only what is billed is held ahead (an item on the developer's own key is recorded at the end, at 0 credits). */
  private billedKinds(): SessionMeterKind[] {
    return (['minutes', 'llm', 'tts', 'stt'] as const).filter((k) => this.items[k].billable);
  }

  /** The answer the holds give without a round trip: past the call's cap, or covered (null); undefined otherwise. */
  private answeredByHolds(need: Record<SessionMeterKind, number>): LimitReason | null | undefined {
    if (this.limits.maxCredits !== null && this.creditsOf(need) > this.limits.maxCredits) return 'max-credits';
    if (this.billedKinds().every((k) => need[k] <= this.holds[k].units)) return null;
    return undefined;
  }

  private async reserve(need: Record<SessionMeterKind, number>, lookAhead = false): Promise<LimitReason | null> {
    // The reservations ahead of this one may have covered it meanwhile.
    const answered = this.answeredByHolds(need);
    if (answered !== undefined) return answered;
    const credits = this.creditsOf(need);
    const kinds = this.billedKinds();
    const held = this.creditsOf({
      minutes: this.holds.minutes.units,
      stt: this.holds.stt.units,
      tts: this.holds.tts.units,
      llm: this.holds.llm.units,
    });
    const growth = credits - held;
    // A look-ahead grows the holds only when the balance covers all of it: grown in part (some items held, the
    // others refused), it would spend the balance the next reply's own check needs, and end a call that one more
    // reply still fits in.
    if (lookAhead && growth > 0) {
      const balance = await this.s.infra.meter.snapshot(this.s.developerId);
      if (balance.remaining < growth) return null;
    }
    if (growth > 0) {
      const headroom = await dailyHeadroom(this.s.infra.db, this.s.developerId, this.limits.apiKeyId);
      if (headroom && growth > headroom.remaining) return 'daily-cap';
    }
    // One statement for all four, all or none: they meet once on the account row's lock.
    try {
      await RunningHold.coverAll(
        this.s.infra.meter,
        kinds.map((k) => [this.holds[k], need[k]]),
      );
    } catch (e) {
      if (isApiError(e) && e.code === 'insufficient_credits') return 'balance';
      throw e;
    }
    return null;
  }

  /** Units each item must cover: the usage so far plus what comes before the next check. */
  private needed(elapsedMs: number, opts: ReserveOptions): Record<SessionMeterKind, number> {
    const used = { llm: this.usage.llmTokens, tts: this.usage.ttsChars, stt: this.ownSttSeconds() };
    if (!opts.reply) {
      const minutes = Math.max(1, Math.ceil((elapsedMs + (opts.aheadMs ?? 0)) / 60_000));
      return { minutes, llm: used.llm, tts: used.tts, stt: Math.ceil(used.stt) };
    }
    // The reply just finished is the newest evidence of what a reply uses.
    for (const k of ['llm', 'tts', 'stt'] as const) {
      this.largestReply[k] = Math.max(this.largestReply[k], used[k] - this.atLastReply[k]);
    }
    this.atLastReply = used;
    const est = this.replyEstimate();
    const n = opts.replies ?? 1;
    // The closing words after the last of these replies: a cap then ends the call between utterances, goodbye whole.
    const closing = this.limits.closingChars ?? 0;
    const closingMs = Math.ceil(closing / CLOSING_CHARS_PER_SECOND) * 1000;
    return {
      minutes: Math.max(1, Math.ceil((elapsedMs + n * REPLY_ESTIMATE.seconds * 1000 + closingMs) / 60_000)),
      llm: used.llm + n * est.llm,
      tts: used.tts + n * est.tts + closing,
      stt: Math.ceil(used.stt + n * est.stt),
    };
  }

  /**
   * The next reply's usage: the largest reply so far, and at least the prompt the model will read (system prompt
   * and conversation, ~4 characters a token) plus the agent's output limit, a 300-character spoken reply and 15 s
   * of caller speech.
   */
  private replyEstimate(): { llm: number; tts: number; stt: number } {
    const said = this.turns.reduce((n, t) => n + t.text.length, 0);
    const prompt = Math.ceil((this.s.agent.system_prompt.length + said) / 4);
    return {
      llm: Math.max(this.largestReply.llm, prompt + this.s.agent.max_tokens),
      tts: Math.max(this.largestReply.tts, REPLY_ESTIMATE.ttsChars),
      stt: Math.max(this.largestReply.stt, REPLY_ESTIMATE.sttSeconds),
    };
  }

  /** Credits of the billable items at these units. */
  private creditsOf(units: Record<SessionMeterKind, number>): number {
    const w = creditWeights(this.s.infra.config);
    let total = 0;
    for (const k of ['minutes', 'stt', 'tts', 'llm'] as const) {
      const it = this.items[k];
      if (it.billable) total += w.credits(it.category, it.operation, units[k]);
    }
    return total;
  }

  /** The audio seconds the session's own STT engine heard (what its item is charged). */
  private ownSttSeconds(): number {
    const others = Object.values(this.sttEngines().otherSeconds).reduce((a, b) => a + b, 0);
    return Math.max(0, this.sttAudioSeconds() - others);
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
  metrics(
    durationMs: number,
    prepared: PreparedReplies['stats'],
  ): ReturnType<typeof sessionMetrics> & { sttFallbackSeconds: number; sttEngineSwitches: number } {
    const engines = this.sttEngines();
    const fallback = Object.values(engines.otherSeconds).reduce((a, b) => a + b, 0);
    const base = sessionMetrics(this.turns, {
      durationMs,
      toolExecutions: this.usage.tools,
      interruptions: this.usage.interruptions,
      sttAudioSeconds: this.sttAudioSeconds(),
      ttsCharacters: this.usage.ttsChars,
      llmTokens: this.usage.llmTokens,
      prepared,
    });
    // Which engines heard the call (the session row names its own STT; these say how much a fallback heard).
    return { ...base, sttFallbackSeconds: Math.round(fallback * 10) / 10, sttEngineSwitches: engines.switches };
  }

  /**
   * Meters the session: commits the minutes connected (at least one), then the engines' own usage, each against
   * the hold reserved ahead of it. Usage the holds and the balance could not cover (a vendor reporting far more
   * than a reply's estimate) is recorded as waived with reason `balance`. Never throws: the call is over either
   * way, and a charge that failed is logged.
   */
  settle(durationMs: number): Promise<void> {
    const run = this.queue.then(() => this.charge(durationMs));
    this.queue = run.catch(() => undefined);
    return run.catch((e: Error) =>
      this.s.log.warn({ err: e.message, sessionId: this.s.sessionId }, 'session metering failed'),
    );
  }

  private async charge(durationMs: number): Promise<void> {
    const actual: Record<SessionMeterKind, number> = {
      minutes: Math.max(1, Math.ceil(durationMs / 60_000)),
      stt: Math.ceil(this.ownSttSeconds()),
      tts: this.usage.ttsChars,
      llm: this.usage.llmTokens,
    };
    // No minute was ever held (the call was refused at the start): nothing to charge.
    if (this.holds.minutes.units === 0) return;
    for (const k of ['minutes', 'stt', 'tts', 'llm'] as const) await this.holds[k].commit(actual[k], 'balance');
    // What a fallback engine heard, under its own provider: recorded, never charged (only the local recogniser
    // takes over, and it costs nobody anything).
    for (const [provider, seconds] of Object.entries(this.sttEngines().otherSeconds)) {
      if (seconds <= 0) continue;
      const { infra, developerId, sessionId } = this.s;
      const item = fallbackSttItem(this.items.stt, this.s.engines.sttProvider, provider);
      await new RunningHold(infra.meter, () => ({
        developerId,
        requestId: sessionId,
        ...item,
        ...(this.limits.apiKeyId ? { apiKeyId: this.limits.apiKeyId } : {}),
      })).commit(Math.ceil(seconds), 'balance');
    }
  }
}
