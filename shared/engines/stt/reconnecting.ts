import { EngineError, isEngineError } from '../../kernel/errors/engine-error.ts';
import type { SttStream, SttStreamEvent } from './types.ts';

/** Audio kept for a resend: what the STT has not finalized yet, at most this much (the oldest goes first). */
const KEEP_SECONDS = 10;
/** Waits before each reconnection attempt in a row; a stream that delivers an event resets the count. */
export const RETRY_DELAYS_MS = [0, 250, 500, 1000, 2000];

/** What a reconnecting stream tells its consumer. */
export interface ReconnectingSttHandlers {
  /** A partial or final, its times on the caller's timeline (seconds from the first audio written). */
  onEvent(ev: SttStreamEvent): void;
  /** The stream gave up: a permanent error, or the retries ran out. Nothing more is heard after it. */
  onFail(e: unknown): void;
  /** A connection dropped and another is being opened (`attempt` counts from 1 since the last event). */
  onReconnect?(attempt: number, e: unknown): void;
}

/** What to do after a connection failed: open another after `delayMs`, or give up (null). */
export type NextConnection = { delayMs: number } | null;

/**
 * A streaming STT connection that survives its socket, for any consumer of a live STT (a call's STT stage, a
 * streaming transcription): when the stream fails with a retryable error (or the vendor closes it without being
 * asked), a new one is opened and the audio the STT had not finalized (from the end of its last final, at most
 * KEEP_SECONDS) is sent again, then the live audio follows. Nothing of the gap is lost: audio written while
 * reconnecting is kept in the same buffer, and the new stream's times are shifted onto the caller's timeline, so a
 * consumer compares them with its own clock as before. A permanent error (bad key, bad audio) is not retried.
 * Attempts back off (RETRY_DELAYS_MS); a stream that delivers an event resets the count. Audio sent again is counted
 * (`resentSeconds`): the vendor bills it again.
 *
 * `open` opens one connection; subclasses choose what the next one is (fallback.ts switches engines).
 */
export class ReconnectingSttStream {
  private stream: SttStream | null = null;
  /**
   * The audio not finalized yet, copied into a ring (`keptBytes` from `ringStart`, starting at `keptFromS` stream
   * seconds): seconds of 20 ms chunks would otherwise stay alive as objects (and keep their buffer pools alive),
   * which the garbage collector pays for on every call.
   */
  private readonly ring: Buffer;
  private ringStart = 0;
  private keptBytes = 0;
  private keptFromS = 0;
  /** Where the current connection's time 0 is on the caller's timeline. */
  private offsetS = 0;
  protected failures = 0;
  protected closed = false;
  private retry: NodeJS.Timeout | null = null;
  /** Connections opened after the first one. */
  reconnects = 0;
  /** Stream seconds sent again after a drop (the vendor bills them again). */
  resentSeconds = 0;

  constructor(
    private readonly open: () => SttStream,
    protected readonly bytesPerSecond: number,
    protected readonly handlers: ReconnectingSttHandlers,
  ) {
    this.ring = Buffer.alloc(Math.ceil((KEEP_SECONDS * bytesPerSecond) / 2) * 2);
  }

  /** Opens the first connection; an engine that refuses it at once (no key, a language it does not take) throws. */
  start(): void {
    this.connect(this.throwOnFirstOpen);
  }

  /** Whether `start` throws what the first `open` throws (a fallback list goes on to the next engine instead). */
  protected get throwOnFirstOpen(): boolean {
    return true;
  }

  /**
   * Sends caller audio. `sound`: whether it stands over the line's noise floor, where the caller already knows (the
   * realtime STT stage measures every chunk): a subclass that needs it (the fallback's stall watch) then does not
   * measure it again. Unused here.
   */
  write(pcm: Buffer, _sound?: boolean): void {
    if (this.closed || !pcm.length) return;
    this.keep(pcm);
    this.sent(pcm.length / this.bytesPerSecond, false);
    this.stream?.write(pcm);
  }

  /** No more audio: the STT flushes its last final. */
  end(): void {
    this.stream?.end();
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.stream?.close();
  }

  /** Seconds of audio the STT has not finalized (what a new connection would hear again). */
  protected get keptSeconds(): number {
    return this.keptBytes / this.bytesPerSecond;
  }

  /** Audio went to the current connection: `resent` when it is the unfinalized audio sent again to a new one. */
  protected sent(_seconds: number, _resent: boolean): void {}

  /** An event arrived from the current connection (already on the caller's timeline). */
  protected heard(_ev: SttStreamEvent): void {}

  /**
   * After a failed connection: another after a delay, or none. The default retries a retryable failure with back-off
   * and gives up on a permanent one or when the delays run out.
   */
  protected next(why: unknown, attempt: number): NextConnection {
    if (why && isEngineError(why) && !why.retryable) return null;
    if (attempt >= RETRY_DELAYS_MS.length) return null;
    return { delayMs: RETRY_DELAYS_MS[attempt]! };
  }

  /** Drops the current connection (asked, not failed) and opens the next one now, with the unfinalized audio. */
  protected reopen(): void {
    if (this.closed) return;
    const old = this.stream;
    this.stream = null;
    old?.close();
    this.reconnect();
  }

  /** Fails the current connection from outside (a deadline): handled like a dropped socket. */
  protected abandon(why: unknown): void {
    const stream = this.stream;
    if (stream) this.failed(stream, why);
  }

  private connect(rethrow = false): void {
    let stream: SttStream;
    try {
      stream = this.open();
    } catch (e) {
      if (rethrow) throw e;
      // Refused before a socket (no key, a language it does not take): a failed connection like any other,
      // permanent unless the engine says otherwise.
      stream = failedStream(isEngineError(e) ? e : new EngineError('stt', 'bad_request', String(e), false));
    }
    this.stream = stream;
    this.offsetS = this.keptFromS;
    // The audio the STT has not finalized yet: the new connection hears it from the start (a copy: the ring is
    // reused while the socket may still hold what it was given).
    const first = Math.min(this.keptBytes, this.ring.length - this.ringStart);
    if (first > 0) stream.write(Buffer.from(this.ring.subarray(this.ringStart, this.ringStart + first)));
    if (first < this.keptBytes) stream.write(Buffer.from(this.ring.subarray(0, this.keptBytes - first)));
    void this.read(stream, this.offsetS);
  }

  private reconnect(): void {
    this.reconnects++;
    this.resentSeconds += this.keptSeconds;
    this.sent(this.keptSeconds, true);
    this.connect();
  }

  private async read(stream: SttStream, offsetS: number): Promise<void> {
    let why: unknown = null;
    try {
      for await (const ev of stream.events) {
        if (this.closed || stream !== this.stream) return;
        this.failures = 0;
        const shifted = offsetS === 0 ? ev : shift(ev, offsetS);
        if (shifted.type === 'final') this.finalized(shifted.end);
        this.handlers.onEvent(shifted);
        // After the consumer has it: the hook may move to another connection (this loop then ends).
        if (!this.closed) this.heard(shifted);
      }
    } catch (e) {
      why = e;
    }
    this.failed(stream, why);
  }

  private failed(stream: SttStream, why: unknown): void {
    if (this.closed || stream !== this.stream) return;
    const attempt = this.failures++;
    const next = this.next(why, attempt);
    if (!next) {
      this.stream = null;
      stream.close();
      return this.handlers.onFail(why ?? new Error('stt stream ended'));
    }
    this.handlers.onReconnect?.(attempt + 1, why);
    this.stream = null;
    stream.close();
    const go = () => {
      this.retry = null;
      if (!this.closed) this.reconnect();
    };
    if (next.delayMs <= 0) return go();
    this.retry = setTimeout(go, next.delayMs);
  }

  /** The STT finalized audio up to `endS`: it is never needed again (whole samples). */
  private finalized(endS: number): void {
    const bytes = Math.floor(((endS - this.keptFromS) * this.bytesPerSecond) / 2) * 2;
    if (bytes > 0) this.drop(bytes);
  }

  /** Copies `pcm` into the ring; the oldest audio goes when it is full (at most KEEP_SECONDS are kept). */
  private keep(pcm: Buffer): void {
    const cap = this.ring.length;
    let src = pcm;
    if (src.length > cap) {
      // One chunk longer than the ring: everything before its last KEEP_SECONDS goes.
      this.drop(this.keptBytes);
      this.keptFromS += (src.length - cap) / this.bytesPerSecond;
      src = src.subarray(src.length - cap);
    }
    const over = this.keptBytes + src.length - cap;
    if (over > 0) this.drop(over + (over % 2));
    const at = (this.ringStart + this.keptBytes) % cap;
    const first = Math.min(src.length, cap - at);
    src.copy(this.ring, at, 0, first);
    if (first < src.length) src.copy(this.ring, 0, first);
    this.keptBytes += src.length;
  }

  /** Forgets the oldest `bytes` kept. */
  private drop(bytes: number): void {
    const n = Math.min(bytes, this.keptBytes);
    if (n <= 0) return;
    this.ringStart = (this.ringStart + n) % this.ring.length;
    this.keptBytes -= n;
    this.keptFromS += n / this.bytesPerSecond;
  }
}

/** A connection that failed before it opened: its events throw at once. */
function failedStream(e: unknown): SttStream {
  return {
    write() {},
    end() {},
    close() {},
    // eslint-disable-next-line require-yield
    events: (async function* () {
      throw e;
    })(),
  };
}

function shift(ev: SttStreamEvent, s: number): SttStreamEvent {
  if (ev.type === 'partial') return ev.end === undefined ? ev : { ...ev, end: ev.end + s };
  if (ev.type === 'progress') return { ...ev, decoded: ev.decoded + s, settled: ev.settled + s };
  return {
    ...ev,
    start: ev.start + s,
    end: ev.end + s,
    words: ev.words?.map((w) => ({ ...w, start: w.start + s, end: w.end + s })),
  };
}
