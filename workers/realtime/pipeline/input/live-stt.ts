import { isEngineError } from '../../../../shared/kernel/errors/engine-error.ts';
import type { SttStream, SttStreamEvent } from '../../../../shared/engines/stt/types.ts';

/** Audio kept for a resend: what the STT has not finalized yet, at most this much (the oldest goes first). */
const KEEP_SECONDS = 10;
/** Waits before each reconnection attempt in a row; a stream that delivers an event resets the count. */
const RETRY_DELAYS_MS = [0, 250, 500, 1000, 2000];

/**
 * A streaming STT connection that survives its socket: when the stream fails with a retryable error (or the vendor
 * closes it without being asked), a new one is opened and the audio the STT had not finalized (from the end of its
 * last final, at most KEEP_SECONDS) is sent again, then the live audio follows. Nothing of the gap is lost: audio
 * written while reconnecting is kept in the same buffer, and the new stream's times are shifted onto the call's
 * audio clock, so the turn stage compares them with the VAD's as before. A permanent error (bad key, bad audio) is
 * not retried.
 */
export class LiveStt {
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
  /** Where the current connection's time 0 is on the call's clock. */
  private offsetS = 0;
  private failures = 0;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  /** Connections opened after the first one. */
  reconnects = 0;
  /** Stream seconds sent again after a drop (the vendor bills them again). */
  resentSeconds = 0;

  constructor(
    private readonly open: () => SttStream,
    private readonly bytesPerSecond: number,
    private readonly onEvent: (ev: SttStreamEvent) => void,
    private readonly onFail: (e: unknown) => void,
    private readonly onReconnect: (attempt: number, e: unknown) => void,
  ) {
    this.ring = Buffer.alloc(Math.ceil((KEEP_SECONDS * bytesPerSecond) / 2) * 2);
  }

  start(): void {
    this.connect();
  }

  write(pcm: Buffer): void {
    if (this.closed || !pcm.length) return;
    this.keep(pcm);
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

  private connect(): void {
    const stream = this.open();
    this.stream = stream;
    this.offsetS = this.keptFromS;
    // The audio the STT has not finalized yet: the new connection hears it from the start (a copy: the ring is
    // reused while the socket may still hold what it was given).
    const first = Math.min(this.keptBytes, this.ring.length - this.ringStart);
    if (first > 0) stream.write(Buffer.from(this.ring.subarray(this.ringStart, this.ringStart + first)));
    if (first < this.keptBytes) stream.write(Buffer.from(this.ring.subarray(0, this.keptBytes - first)));
    void this.read(stream, this.offsetS);
  }

  private async read(stream: SttStream, offsetS: number): Promise<void> {
    let why: unknown = null;
    try {
      for await (const ev of stream.events) {
        if (this.closed || stream !== this.stream) return;
        this.failures = 0;
        const shifted = offsetS === 0 ? ev : shift(ev, offsetS);
        if (shifted.type === 'final') this.finalized(shifted.end);
        this.onEvent(shifted);
      }
    } catch (e) {
      why = e;
    }
    if (this.closed || stream !== this.stream) return;
    if (why && isEngineError(why) && !why.retryable) return this.onFail(why);
    const attempt = this.failures++;
    if (attempt >= RETRY_DELAYS_MS.length) return this.onFail(why ?? new Error('stt stream ended'));
    this.onReconnect(attempt + 1, why);
    stream.close();
    this.retry = setTimeout(() => {
      this.retry = null;
      if (this.closed) return;
      this.reconnects++;
      this.resentSeconds += this.keptBytes / this.bytesPerSecond;
      this.connect();
    }, RETRY_DELAYS_MS[attempt]);
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

function shift(ev: SttStreamEvent, s: number): SttStreamEvent {
  if (ev.type === 'partial') return ev.end === undefined ? ev : { ...ev, end: ev.end + s };
  return {
    ...ev,
    start: ev.start + s,
    end: ev.end + s,
    words: ev.words?.map((w) => ({ ...w, start: w.start + s, end: w.end + s })),
  };
}
