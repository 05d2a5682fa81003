import { readSessionLimits } from '../../../shared/domains/billing/spending-caps.ts';
import type { LimitReason, SessionAccounting } from './session-accounting.ts';
import type { SessionInit } from './types.ts';

/** Said when a cap or the balance ends a call and the agent has no `goodbyeMessage` of its own. */
export const DEFAULT_GOODBYE = "I'm sorry, I have to end the call here. Goodbye.";

/** How often the connected minutes are reserved ahead between replies (a silent call still spends minutes). */
export const MINUTE_TICK_MS = 20_000;

/** What the watcher needs of the call: its clock and a way to end it (goodbye first) for a reason. */
export interface LimitHost {
  now(): number;
  end(reason: LimitReason): void;
}

/**
 * The call's spending limits, watched: the per-call caps (the session-create body over the agent's defaults), the
 * daily caps and the balance. Before each reply `beforeReply` reserves what the reply will use; between replies a
 * tick reserves the minutes ahead; at `maxDurationSeconds` the call ends. Whatever stops it, the host says the
 * goodbye and ends the call with the reason (`max-duration`, `max-credits`, `daily-cap`, `balance`).
 */
export class CallLimits {
  private durationTimer: NodeJS.Timeout | null = null;
  private tick: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Seconds the call may last: the session's cap, else the agent's, never past the platform's. */
  maxDurationSeconds: number;
  readonly goodbye: string;

  constructor(
    private readonly s: Pick<
      SessionInit,
      'infra' | 'sessionId' | 'developerId' | 'agent' | 'settings' | 'log' | 'outbound'
    >,
    private readonly accounting: SessionAccounting,
    private readonly host: LimitHost,
  ) {
    this.maxDurationSeconds = s.settings.maxSessionSeconds;
    this.goodbye = s.agent.goodbye_message?.trim() || DEFAULT_GOODBYE;
  }

  /** Reads the session's limits and gives the books theirs; before the first hold, which records the API key. */
  async load(): Promise<void> {
    const { infra, sessionId, developerId, agent, settings } = this.s;
    const row = await readSessionLimits(infra.db, sessionId, developerId);
    const duration = row?.maxDurationSeconds ?? agent.max_duration_seconds;
    this.maxDurationSeconds = Math.min(settings.maxSessionSeconds, duration ?? Infinity);
    // An outbound call's voicemail message is closing words too: it plays whole or not at all.
    const vm = this.s.outbound && agent.voicemail?.action === 'leave_message' ? (agent.voicemail.message ?? '') : '';
    this.accounting.setLimits({
      maxCredits: row?.maxCredits ?? agent.max_credits ?? null,
      apiKeyId: row?.apiKeyId ?? null,
      closingChars: Math.max(this.goodbye.length, vm.length),
    });
  }

  /**
   * Starts the duration timer and the minute tick, and checks the caps once: the limit already reached at the start
   * (a daily cap spent by other calls), or null.
   */
  async arm(): Promise<LimitReason | null> {
    const left = this.maxDurationSeconds * 1000 - this.host.now();
    this.durationTimer = setTimeout(() => this.reached('max-duration'), Math.max(0, left));
    this.durationTimer.unref();
    this.tick = setInterval(() => void this.check(false), MINUTE_TICK_MS);
    this.tick.unref();
    const reason = await this.check(false, false);
    if (!reason) this.lookAhead();
    return reason;
  }

  /**
   * Reserves the next reply ahead; the limit that stops it, or null when the reply may run. Usually answered without
   * a round trip: the look-ahead after the previous reply (or the start) already holds it.
   */
  async beforeReply(): Promise<LimitReason | null> {
    if (this.host.now() >= this.maxDurationSeconds * 1000) return 'max-duration';
    const reason = await this.check(true, false);
    if (!reason) this.lookAhead();
    return reason;
  }

  /**
   * Holds two replies ahead in the background, so that the next reply's check finds its hold in place and the LLM
   * starts with no database round trip after the caller's last word (issue 20's tail). A refusal here stops
   * nothing: the next reply's own check, for one reply, decides.
   */
  private lookAhead(): void {
    if (this.stopped) return;
    void this.accounting.reserveAhead(this.host.now(), { reply: true, replies: 2 }).catch((e: unknown) => {
      this.s.log.debug({ sessionId: this.s.sessionId, err: (e as Error).message }, 'reply look-ahead failed');
    });
  }

  private async check(reply: boolean, endOnLimit = true): Promise<LimitReason | null> {
    if (this.stopped) return null;
    try {
      const reason = await this.accounting.reserveAhead(this.host.now(), {
        reply,
        aheadMs: MINUTE_TICK_MS + 5_000,
      });
      if (reason && endOnLimit) this.reached(reason);
      return reason;
    } catch (e) {
      // The database could not be asked: the call goes on and the end settles what it used (logged, not hidden).
      this.s.log.warn({ sessionId: this.s.sessionId, err: (e as Error).message }, 'call limits check failed');
      return null;
    }
  }

  private reached(reason: LimitReason): void {
    if (this.stopped) return;
    this.s.log.info({ sessionId: this.s.sessionId, reason }, 'call limit reached');
    this.host.end(reason);
  }

  stop(): void {
    this.stopped = true;
    if (this.durationTimer) clearTimeout(this.durationTimer);
    if (this.tick) clearInterval(this.tick);
  }
}
