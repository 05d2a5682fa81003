import { pcmToInt16, rms16 } from '../../kernel/audio/pcm.ts';
import { NoiseFloor } from '../../kernel/audio/noise-floor.ts';
import { EngineError, isEngineError } from '../../kernel/errors/engine-error.ts';
import { ReconnectingSttStream, type NextConnection, type ReconnectingSttHandlers } from './reconnecting.ts';
import type { SttStream, SttStreamEvent } from './types.ts';

/** One engine of a fallback list: its name (the provider, for the bill and the trace) and how to open a stream. */
export interface FallbackSttEngine {
  name: string;
  open(): SttStream;
}

export interface FallbackSttOptions {
  /**
   * Reconnections of one engine in a row before the next engine takes over (LiveKit's `max_retry_per_stt`, 1 there
   * too): a dropped socket is retried at once, a second failure in a row moves on.
   */
  retriesPerEngine?: number;
  /**
   * Seconds of caller sound (audio over the line's noise floor) sent to an engine without a single event back: the
   * engine is stalled (a socket that accepts audio and says nothing), and the next one hears the utterance. Counted
   * on the audio, not the wall clock: LiveKit's `attempt_timeout`, measured where a call can tell. Generous (a
   * vendor answers speech within a second), because sound that is not speech (a cough, music) gets no words either.
   */
  stallSeconds?: number;
  /**
   * Seconds of audio heard by a fallback engine before the first engine is tried again (LiveKit's
   * `retry_interval`); the switch back waits for the end of an utterance (a final), so no utterance is split.
   */
  recoverySeconds?: number;
}

export const FALLBACK_DEFAULTS: Required<FallbackSttOptions> = {
  retriesPerEngine: 1,
  stallSeconds: 8,
  recoverySeconds: 60,
};

/** What a fallback stream tells its consumer, besides the events: which engine each came from, and the switches. */
export interface FallbackSttHandlers extends Omit<ReconnectingSttHandlers, 'onEvent'> {
  /** A final or partial, and the engine that produced it. */
  onEvent(ev: SttStreamEvent, engine: string): void;
  /** The stream moved from one engine to another (`why`: the failure, or `recovery` when back to the first). */
  onSwitch?(from: string, to: string, why: unknown): void;
}

/**
 * A live STT over an ordered list of live STTs, after LiveKit's `stt/FallbackAdapter`: the first engine hears the
 * audio; when its stream fails for good (a permanent error, or a retryable one that `retriesPerEngine`
 * reconnections did not cure) or stalls (`stallSeconds` of speech and no event), the next engine takes over and is
 * sent the audio the failed one had not finalized (the current utterance, at most 10 s), so a caller cut off
 * mid-sentence is heard whole; times stay on the caller's timeline. After `recoverySeconds` of audio on a fallback,
 * the first engine is tried again at the next final (LiveKit probes the failed engine on a parallel stream; a call
 * would pay the vendor twice for that audio, so here the probe is the switch itself, and a failure sends the call
 * back down the list at once). Each event says which engine produced it, and the audio each engine heard is
 * counted by engine (`secondsBy`), resent audio included: the bill follows the engine that transcribed.
 * When no other engine is left, the one in use is retried as ReconnectingSttStream retries, then `onFail`.
 * Unlike LiveKit's adapter, which engine is up is the stream's own knowledge, not shared across streams: each new
 * call starts on the first engine (during an outage a refused handshake moves it on at once; a handshake that hangs
 * is caught by the stall deadline), so no process-wide state decides a call's engine.
 */
export class FallbackSttStream extends ReconnectingSttStream {
  /** The engine hearing the audio now (an object: the base's callbacks read it, made before `this` exists). */
  private readonly current: { index: number };
  /** Engines that failed in this stream (the first is tried again after `recoverySeconds`). */
  private readonly down = new Set<number>();
  private readonly opts: Required<FallbackSttOptions>;
  /** Speech seconds sent since the current connection's last event; audio seconds since the last switch. */
  private unanswered = 0;
  private sinceSwitch = 0;
  private readonly floor = new NoiseFloor(20);
  /** Audio seconds each engine was sent (resent audio included). */
  readonly secondsBy: Record<string, number> = {};
  /** Switches between engines. */
  switches = 0;

  constructor(
    private readonly engines: FallbackSttEngine[],
    bytesPerSecond: number,
    private readonly fallbackHandlers: FallbackSttHandlers,
    opts: FallbackSttOptions = {},
  ) {
    if (engines.length === 0) throw new Error('a fallback STT needs at least one engine');
    const current = { index: 0 };
    super(() => engines[current.index]!.open(), bytesPerSecond, {
      onEvent: (ev) => fallbackHandlers.onEvent(ev, engines[current.index]!.name),
      onFail: (e) => fallbackHandlers.onFail(e),
      onReconnect: (attempt, e) => fallbackHandlers.onReconnect?.(attempt, e),
    });
    this.current = current;
    this.opts = { ...FALLBACK_DEFAULTS, ...opts };
  }

  protected override get throwOnFirstOpen(): boolean {
    return false;
  }

  /** The engine hearing the audio now. */
  get engine(): string {
    return this.engines[this.current.index]!.name;
  }

  override write(pcm: Buffer, sound?: boolean): void {
    if (this.closed || !pcm.length) return;
    super.write(pcm);
    const seconds = pcm.length / this.bytesPerSecond;
    this.sinceSwitch += seconds;
    if (!(sound ?? this.overFloor(pcm))) return;
    this.unanswered += seconds;
    // A stalled engine with nothing to fall back to goes on: better late words than none.
    if (this.unanswered >= this.opts.stallSeconds && this.spare() >= 0) {
      this.unanswered = 0;
      this.failures = this.opts.retriesPerEngine; // a stalled engine is not reconnected: the next one hears it
      this.abandon(new EngineError(this.engine, 'unavailable', `${this.engine}: no result for the speech sent`, true));
    }
  }

  /** Measured here only for a consumer that does not say (the realtime stage says: it measures every chunk). */
  private overFloor(pcm: Buffer): boolean {
    const level = rms16(pcmToInt16(pcm));
    this.floor.push(level);
    return level >= this.floor.gateRms;
  }

  protected override sent(seconds: number): void {
    this.secondsBy[this.engine] = (this.secondsBy[this.engine] ?? 0) + seconds;
  }

  protected override heard(ev: SttStreamEvent): void {
    this.unanswered = 0;
    // Back to the first engine between utterances, once a fallback has heard long enough.
    if (ev.type !== 'final' || this.current.index === 0 || this.sinceSwitch < this.opts.recoverySeconds) return;
    this.down.delete(0);
    this.switchTo(0, 'recovery');
    this.reopen();
  }

  protected override next(why: unknown, attempt: number): NextConnection {
    // The same engine again while it has retries left (at once: another engine is waiting if it fails again); a
    // permanent failure (a bad key, a language it does not take) goes to the next at once.
    const permanent = isEngineError(why) && !why.retryable;
    if (!permanent && attempt < this.opts.retriesPerEngine) return { delayMs: 0 };
    this.down.add(this.current.index);
    const to = this.spare();
    // Nowhere else to go: the engine in use is retried with back-off, as a stream without a fallback is (a local
    // worker that died is replaced), and given up on as that one would be.
    if (to < 0) return super.next(why, attempt);
    this.switchTo(to, why);
    return { delayMs: 0 };
  }

  /** The first engine that has not failed, other than the current one; -1 when none. */
  private spare(): number {
    return this.engines.findIndex((_, i) => i !== this.current.index && !this.down.has(i));
  }

  private switchTo(to: number, why: unknown): void {
    const from = this.engine;
    this.current.index = to;
    this.sinceSwitch = 0;
    this.unanswered = 0;
    this.failures = 0;
    this.switches++;
    this.fallbackHandlers.onSwitch?.(from, this.engine, why);
  }
}
