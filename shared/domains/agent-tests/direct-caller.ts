import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { resamplePcm } from '../../kernel/audio/resampler.ts';
import type { ReceivedMedia } from './twilio-caller.ts';

/**
 * A scripted caller on the direct protocol (docs/realtime.md, WS /v1/agents/:id/session), the browser's path: one
 * 20 ms binary PCM16LE 16 kHz frame every 20 ms of wall time (silence when not speaking), and the agent's 16 kHz
 * audio played like the browser page plays it: in order, in real time, each `mark` echoed once the audio before it
 * has played, every pending mark echoed when `clear` flushes the queue. The same shape as the Twilio caller, so a
 * scenario runs on either transport unchanged.
 */
const RATE = 16000;
const FRAME = (RATE / 1000) * 20 * 2; // 640 bytes: 20 ms of 16 kHz PCM16

export class DirectCaller {
  readonly ws: WebSocket;
  /** Agent audio frames, by arrival time. */
  readonly media: ReceivedMedia[] = [];
  readonly clears: number[] = [];
  readonly marksEchoed: string[] = [];
  /** The server's JSON events other than marks and clears (session.started, transcript, error, …). */
  readonly events: Record<string, unknown>[] = [];
  closeCode: number | null = null;
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  /** performance.now() when each `say` sent its last frame, in order. */
  readonly speechEnds: number[] = [];
  private speech: Buffer[] = [];
  private playQueue: Array<{ pcm: Buffer } | { mark: string }> = [];
  private ticker: NodeJS.Timeout | null = null;
  private nextTick = 0;
  private waiters: Array<() => void> = [];

  /** `url`: the socket URL with its session token (POST /v1/sessions/direct answers it). */
  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) =>
      this.ws.once('close', (code) => {
        this.closeCode = code;
        this.stopTicker();
        this.notify();
        resolve();
      }),
    );
    this.ws.on('message', (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary));
  }

  /** Connects and starts the real-time audio clock. */
  async start(): Promise<void> {
    await this.opened;
    this.nextTick = performance.now();
    this.tick();
  }

  private tick = (): void => {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    const now = performance.now();
    // Catch up if the event loop was late, so the stream stays real time.
    while (this.nextTick <= now) {
      this.nextFrame();
      this.playFrame();
      this.nextTick += 20;
    }
    this.ticker = setTimeout(this.tick, Math.max(0, this.nextTick - performance.now()));
  };

  private stopTicker(): void {
    if (this.ticker) clearTimeout(this.ticker);
    this.ticker = null;
  }

  private nextFrame(): void {
    const frame = Buffer.alloc(FRAME);
    const cur = this.speech[0];
    if (cur) {
      cur.copy(frame, 0, 0, Math.min(FRAME, cur.length));
      if (cur.length <= FRAME) {
        this.speech.shift();
        this.speechEnds.push(performance.now());
      } else {
        this.speech[0] = cur.subarray(FRAME);
      }
    }
    this.sendFrame(frame);
  }

  /** One 20 ms frame of caller audio onto the socket (an impaired line overrides it). */
  protected sendFrame(frame: Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(frame, { binary: true });
  }

  /** Plays 20 ms of the agent's queued audio and echoes the marks it reaches. */
  private playFrame(): void {
    let budget = FRAME;
    while (this.playQueue.length) {
      const head = this.playQueue[0]!;
      if ('mark' in head) {
        this.playQueue.shift();
        this.echoMark(head.mark);
        continue;
      }
      if (budget <= 0) break;
      const take = Math.min(head.pcm.length, budget);
      budget -= take;
      if (take === head.pcm.length) this.playQueue.shift();
      else head.pcm = head.pcm.subarray(take);
    }
  }

  private echoMark(name: string): void {
    this.marksEchoed.push(name);
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'mark', name }));
  }

  /**
   * Queues speech given at the phone voice's 8 kHz (the scenario's caller audio), sent at the protocol's 16 kHz; it
   * goes out in real time. Resolves with the time its last frame was sent.
   */
  say(pcm8k: Buffer): Promise<number> {
    const n = this.speechEnds.length;
    this.speech.push(resamplePcm(pcm8k, 8000, RATE));
    return this.until(() => this.speechEnds.length > n).then(() => this.speechEnds[n]!);
  }

  /** Hangs up the way a client does: `stop` (the session ends with reason client_stop). */
  stop(): void {
    this.stopTicker();
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'stop' }));
  }

  /** Agent audio still to play, ms (16-bit samples at the output rate). */
  get bufferedMs(): number {
    let bytes = 0;
    for (const x of this.playQueue) if ('pcm' in x) bytes += x.pcm.length;
    return (bytes / 2 / RATE) * 1000;
  }

  /** True while agent audio waits in the playback queue. */
  get playing(): boolean {
    return this.playQueue.some((x) => 'pcm' in x);
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    const now = performance.now();
    if (isBinary) {
      this.media.push({ at: now, bytes: data.length });
      this.playQueue.push({ pcm: Buffer.from(data) });
    } else {
      const m = JSON.parse(data.toString('utf8')) as { type: string; name?: string };
      if (m.type === 'mark') this.playQueue.push({ mark: m.name ?? '' });
      else if (m.type === 'clear') {
        this.clears.push(now);
        const pending = this.playQueue.filter((x): x is { mark: string } => 'mark' in x);
        this.playQueue = [];
        for (const p of pending) this.echoMark(p.mark);
      } else this.events.push(m);
    }
    this.notify();
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
