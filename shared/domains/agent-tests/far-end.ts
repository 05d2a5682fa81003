import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';

/** One frame of agent audio as it arrived at the caller. */
export interface ReceivedMedia {
  at: number;
  bytes: number;
}

type Queued = { audio: Buffer } | { mark: string };

/**
 * The far end of a call, whatever the wire protocol: a socket, a real-time clock that sends one 20 ms frame of the
 * caller's audio per tick (silence when not speaking) and plays 20 ms of the agent's queued audio, echoing each
 * `mark` once the audio before it has played and every pending mark when `clear` flushes the queue, as Twilio's
 * buffer and the browser page do. The Twilio caller and the direct-protocol caller differ only in their wire
 * format (the abstract members), so a scenario runs on either unchanged. The benchmark runs hundreds of these in
 * one process: a tick allocates no promise or closure, only what the wire format itself needs.
 */
export abstract class FarEndCaller {
  readonly ws: WebSocket;
  /** Agent audio frames, by arrival time. */
  readonly media: ReceivedMedia[] = [];
  readonly clears: number[] = [];
  readonly marksEchoed: string[] = [];
  /**
   * The last mark echoed because the audio before it had played (not one a `clear` flushed), and performance.now()
   * then: a reply's end mark here means the reply has played (reply-end.ts).
   */
  lastPlayedMark: string | null = null;
  lastPlayedMarkAt = 0;
  closeCode: number | null = null;
  closeReason = '';
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  /** performance.now() when each `say` sent its last frame, in order. */
  readonly speechEnds: number[] = [];
  /** Queued agent audio (in the wire's encoding) and marks at their positions in it. */
  private playQueue: Queued[] = [];
  private ticker: NodeJS.Timeout | null = null;
  private nextTick = 0;
  private waiters: Array<() => void> = [];

  /** Wall-clock ms between two 20 ms frames: 20 on a real-time line, less on a fast one (`rate`). */
  private readonly tickMs: number;
  /** 20 ms frames of the agent's audio played per frame of the caller's (`playout`). */
  private readonly playsPerTick: number;

  /**
   * `frameBytes`: 20 ms of the agent's audio on this wire; `bytesPerMs`: the same rate, per ms. `rate`: how many
   * times faster than the wall clock the far end's media clock runs (1, real time, unless a test asks otherwise):
   * both the caller's frames and the playout of the agent's audio (so its marks) go at that speed. The platform
   * hears a faster line, not a different call: it times the caller's speech by its audio, not by when it came,
   * and a sentence has played when its mark comes back. A test whose subject is not how long the audio lasts
   * (an outcome, a setting, a record) runs its calls on a fast line; timing tests keep the real one.
   * `playout`: a whole number of times faster than its own media clock the far end plays the agent's audio (1 unless
   * a test asks otherwise): the caller still speaks on its media clock, so the platform's mapping of the caller's
   * audio to the session's clock (which assumes a real-time line) stays exact, and only the waits for the agent's
   * replies to play out are shorter. The platform learns what has played from the marks, as on any line.
   */
  constructor(
    url: string,
    private readonly frameBytes: number,
    private readonly bytesPerMs: number,
    rate = 1,
    playout = 1,
  ) {
    if (!(rate >= 1)) throw new Error(`far end: rate ${rate} is not a speed-up (>= 1)`);
    if (!Number.isInteger(playout) || playout < 1)
      throw new Error(`far end: playout ${playout} is not a whole speed-up (>= 1)`);
    this.tickMs = 20 / rate;
    this.playsPerTick = playout;
    this.ws = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) =>
      this.ws.once('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        this.stopTicker();
        this.notify();
        resolve();
      }),
    );
    this.ws.on('message', (data: Buffer, isBinary: boolean) => {
      this.receive(data, isBinary);
      this.notify();
    });
  }

  /** Sends the caller's next 20 ms frame (speech or silence). */
  protected abstract nextFrame(): void;
  /** Tells the server a mark was played (only called while the socket is open). */
  protected abstract sendMark(name: string): void;
  /** One message from the server: agent audio, a mark, a clear or an event, in the wire's format. */
  protected abstract receive(data: Buffer, isBinary: boolean): void;
  /** The first `bytes` of `audio` just played (the Twilio caller keeps what it heard); a view is cut only there. */
  protected played(_audio: Buffer, _bytes: number): void {}

  /** Starts the media clock (the protocol's opening messages are sent first). */
  protected startClock(): void {
    this.nextTick = performance.now();
    this.tick();
  }

  private tick = (): void => {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    const now = performance.now();
    // Catch up if the event loop was late, so the stream stays real time.
    while (this.nextTick <= now) {
      this.nextFrame();
      for (let i = 0; i < this.playsPerTick; i++) this.playFrame();
      this.nextTick += this.tickMs;
    }
    this.ticker = setTimeout(this.tick, Math.max(0, this.nextTick - performance.now()));
  };

  protected stopTicker(): void {
    if (this.ticker) clearTimeout(this.ticker);
    this.ticker = null;
  }

  /** Plays 20 ms of the agent's queued audio and echoes the marks it reaches. */
  private playFrame(): void {
    let budget = this.frameBytes;
    while (this.playQueue.length) {
      const head = this.playQueue[0]!;
      if ('mark' in head) {
        this.playQueue.shift();
        this.lastPlayedMark = head.mark;
        this.lastPlayedMarkAt = performance.now();
        this.echoMark(head.mark);
        continue;
      }
      if (budget <= 0) break;
      const take = Math.min(head.audio.length, budget);
      this.played(head.audio, take);
      budget -= take;
      if (take === head.audio.length) this.playQueue.shift();
      else head.audio = head.audio.subarray(take);
    }
  }

  private echoMark(name: string): void {
    this.marksEchoed.push(name);
    if (this.ws.readyState === WebSocket.OPEN) this.sendMark(name);
  }

  /** Agent audio arrived: recorded, and queued to play after what is already queued. */
  protected queueAudio(audio: Buffer, now: number): void {
    this.media.push({ at: now, bytes: audio.length });
    this.playQueue.push({ audio });
  }

  protected queueMark(name: string): void {
    this.playQueue.push({ mark: name });
  }

  /** `clear`: the queued audio is dropped and every pending mark echoed at once. */
  protected flush(now: number): void {
    this.clears.push(now);
    const pending = this.playQueue.filter((x): x is { mark: string } => 'mark' in x);
    this.playQueue = [];
    for (const p of pending) this.echoMark(p.mark);
  }

  /** Resolves with the send time of the `n`th speech end (the `say` that was the n-th). */
  protected spoken(n: number): Promise<number> {
    return this.until(() => this.speechEnds.length > n).then(() => this.speechEnds[n]!);
  }

  /** True while agent audio waits in the playback queue. */
  get playing(): boolean {
    return this.playQueue.some((x) => 'audio' in x);
  }

  /** Agent audio still to play, ms (what is queued in the playback buffer). */
  get bufferedMs(): number {
    let bytes = 0;
    for (const x of this.playQueue) if ('audio' in x) bytes += x.audio.length;
    return bytes / this.bytesPerMs;
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until `pred` holds (checked on every message, on close, and every 50 ms). */
  async until(pred: () => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `caller: condition not met (media ${this.media.length}, marks ${this.marksEchoed.length}, clears ${this.clears.length}, playing ${this.playing}, close ${this.closeCode})`,
        );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 50));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.stopTicker();
    this.ws.close();
  }
}
