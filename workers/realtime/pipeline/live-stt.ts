import { isEngineError } from '../../../shared/kernel/errors/engine-error.ts';
import type { SttStream, SttStreamEvent } from '../../../shared/engines/stt/types.ts';

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
  /** Chunks not yet finalized; `chunks[head]` starts at `keptFromS` (stream seconds). */
  private chunks: Buffer[] = [];
  private head = 0;
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
  ) {}

  start(): void {
    this.connect();
  }

  write(pcm: Buffer): void {
    if (this.closed || !pcm.length) return;
    this.chunks.push(pcm);
    this.keptBytes += pcm.length;
    while (this.keptBytes > KEEP_SECONDS * this.bytesPerSecond) this.dropOldest();
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
    this.chunks = [];
    this.head = 0;
  }

  private connect(): void {
    const stream = this.open();
    this.stream = stream;
    this.offsetS = this.keptFromS;
    // The audio the STT has not finalized yet: the new connection hears it from the start.
    for (let i = this.head; i < this.chunks.length; i++) stream.write(this.chunks[i]!);
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

  /** The STT finalized audio up to `endS`: it is never needed again. */
  private finalized(endS: number): void {
    while (this.head < this.chunks.length) {
      const len = this.chunks[this.head]!.length / this.bytesPerSecond;
      if (this.keptFromS + len > endS) break;
      this.dropOldest();
    }
  }

  private dropOldest(): void {
    const c = this.chunks[this.head];
    if (!c) return;
    this.chunks[this.head++] = EMPTY;
    this.keptBytes -= c.length;
    this.keptFromS += c.length / this.bytesPerSecond;
    // Compact once the dropped part dominates, so the array does not grow with the call.
    if (this.head > 64 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }
}

const EMPTY = Buffer.alloc(0);

function shift(ev: SttStreamEvent, s: number): SttStreamEvent {
  if (ev.type === 'partial') return ev.end === undefined ? ev : { ...ev, end: ev.end + s };
  return {
    ...ev,
    start: ev.start + s,
    end: ev.end + s,
    words: ev.words?.map((w) => ({ ...w, start: w.start + s, end: w.end + s })),
  };
}
