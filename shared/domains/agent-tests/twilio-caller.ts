import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { mulawToPcm, pcmToMulaw } from '../../kernel/audio/mulaw.ts';

/**
 * A synthetic Twilio caller: opens the media-stream socket like Twilio does (connected, start with
 * customParameters, then one 20 ms μ-law `media` frame every 20 ms of wall time — silence when not speaking — and
 * `stop`), and plays the agent's audio like Twilio's buffer: in order, in real time, echoing each `mark` once the
 * audio before it has played and every pending mark when `clear` flushes the buffer.
 */
export interface CallerOptions {
  url: string;
  token: string | undefined;
  callSid?: string;
  streamSid?: string;
  /** Extra customParameters. */
  params?: Record<string, string>;
}

export interface ReceivedMedia {
  at: number;
  bytes: number;
}

const FRAME = 160; // 20 ms of 8 kHz μ-law

export class TwilioCaller {
  readonly ws: WebSocket;
  readonly received: Array<Record<string, unknown>> = [];
  readonly media: ReceivedMedia[] = [];
  readonly clears: number[] = [];
  readonly marksEchoed: string[] = [];
  /** Agent audio heard (played) by the caller, as 8 kHz PCM. */
  readonly heard: Buffer[] = [];
  closeCode: number | null = null;
  closeReason = '';
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  private seq = 1;
  private chunk = 1;
  private tsMs = 0;
  private speech: Buffer[] = [];
  private ticker: NodeJS.Timeout | null = null;
  private nextTick = 0;
  /** Playback model: queued agent audio (μ-law bytes) and marks at byte positions. */
  private playQueue: Array<{ mulaw: Buffer } | { mark: string }> = [];
  /** performance.now() of the last speech sample of each `say`, in order. */
  readonly speechEnds: number[] = [];
  readonly speechStarts: number[] = [];
  private waiters: Array<() => void> = [];
  private readonly streamSid: string;
  private readonly callSid: string;

  constructor(private readonly opts: CallerOptions) {
    this.streamSid = opts.streamSid ?? `MZ${Math.random().toString(16).slice(2, 18)}`;
    this.callSid = opts.callSid ?? `CA${Math.random().toString(16).slice(2, 18)}`;
    this.ws = new WebSocket(opts.url);
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
    this.ws.on('message', (data) => this.onMessage(data.toString()));
  }

  get call(): string {
    return this.callSid;
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.ws.send(data, { binary });
  }

  /** connected + start, then the real-time media clock. */
  async start(): Promise<void> {
    await this.opened;
    this.sendRaw(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    this.sendRaw(
      JSON.stringify({
        event: 'start',
        sequenceNumber: String(this.seq++),
        streamSid: this.streamSid,
        start: {
          accountSid: 'ACtest',
          streamSid: this.streamSid,
          callSid: this.callSid,
          tracks: ['inbound'],
          customParameters: { ...(this.opts.token ? { token: this.opts.token } : {}), ...this.opts.params },
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        },
      }),
    );
    this.nextTick = performance.now();
    this.tick();
  }

  private tick = (): void => {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    const now = performance.now();
    // Catch up if the event loop was late, so the stream stays real time.
    while (this.nextTick <= now) {
      this.sendFrame();
      this.playFrame();
      this.nextTick += 20;
    }
    this.ticker = setTimeout(this.tick, Math.max(0, this.nextTick - performance.now()));
  };

  private stopTicker(): void {
    if (this.ticker) clearTimeout(this.ticker);
    this.ticker = null;
  }

  private sendFrame(): void {
    let frame: Buffer;
    const cur = this.speech[0];
    if (cur) {
      frame = cur.subarray(0, FRAME);
      if (cur.length <= FRAME) {
        this.speech.shift();
        if (frame.length < FRAME) frame = Buffer.concat([frame, Buffer.alloc(FRAME - frame.length, 0xff)]);
        // performance time of this frame's last sample ≈ now + 20 ms of playout at the far end; we use send time.
        this.speechEnds.push(performance.now());
      } else {
        this.speech[0] = cur.subarray(FRAME);
      }
      if (this.speechStartPending) {
        this.speechStarts.push(performance.now());
        this.speechStartPending = false;
      }
    } else {
      frame = Buffer.alloc(FRAME, 0xff);
    }
    this.sendRaw(
      JSON.stringify({
        event: 'media',
        sequenceNumber: String(this.seq++),
        streamSid: this.streamSid,
        media: {
          track: 'inbound',
          chunk: String(this.chunk++),
          timestamp: String(this.tsMs),
          payload: frame.toString('base64'),
        },
      }),
    );
    this.tsMs += 20;
  }
  private speechStartPending = false;

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
      const take = Math.min(head.mulaw.length, budget);
      this.heard.push(mulawToPcm(head.mulaw.subarray(0, take)));
      budget -= take;
      if (take === head.mulaw.length) this.playQueue.shift();
      else head.mulaw = head.mulaw.subarray(take);
    }
  }

  private echoMark(name: string): void {
    this.marksEchoed.push(name);
    if (this.ws.readyState === WebSocket.OPEN)
      this.sendRaw(
        JSON.stringify({
          event: 'mark',
          streamSid: this.streamSid,
          sequenceNumber: String(this.seq++),
          mark: { name },
        }),
      );
  }

  /** Queues speech (8 kHz PCM s16le); it goes out in real time. Resolves when its last frame was sent. */
  say(pcm8k: Buffer): Promise<number> {
    const n = this.speechEnds.length;
    this.speechStartPending = true;
    this.speech.push(pcmToMulaw(pcm8k));
    return this.until(() => this.speechEnds.length > n).then(() => this.speechEnds[n]!);
  }

  dtmf(digit: string): void {
    this.sendRaw(
      JSON.stringify({
        event: 'dtmf',
        streamSid: this.streamSid,
        sequenceNumber: String(this.seq++),
        dtmf: { track: 'inbound_track', digit },
      }),
    );
  }

  stop(): void {
    this.stopTicker();
    if (this.ws.readyState === WebSocket.OPEN)
      this.sendRaw(
        JSON.stringify({
          event: 'stop',
          sequenceNumber: String(this.seq++),
          streamSid: this.streamSid,
          stop: { accountSid: 'ACtest', callSid: this.callSid },
        }),
      );
  }

  /** True while agent audio waits in the playback buffer. */
  get playing(): boolean {
    return this.playQueue.some((x) => 'mulaw' in x);
  }

  /** Agent audio still to play, ms (what is queued in the playback buffer). */
  get bufferedMs(): number {
    let bytes = 0;
    for (const x of this.playQueue) if ('mulaw' in x) bytes += x.mulaw.length;
    return bytes / 8;
  }

  private onMessage(text: string): void {
    const m = JSON.parse(text) as { event: string; media?: { payload: string }; mark?: { name: string } };
    this.received.push(m as Record<string, unknown>);
    const now = performance.now();
    if (m.event === 'media') {
      const mu = Buffer.from(m.media!.payload, 'base64');
      this.media.push({ at: now, bytes: mu.length });
      this.playQueue.push({ mulaw: mu });
    } else if (m.event === 'mark') {
      this.playQueue.push({ mark: m.mark!.name });
    } else if (m.event === 'clear') {
      this.clears.push(now);
      const pending = this.playQueue.filter((x): x is { mark: string } => 'mark' in x);
      this.playQueue = [];
      for (const p of pending) this.echoMark(p.mark);
    }
    this.notify();
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until `pred` holds (checked on every message and on close). */
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

/** The stream token of the TwiML that POST /v1/sessions/twilio answers (what Twilio would pass on). */
export function tokenFromTwiml(twiml: string): string {
  const m = /<Parameter name="token" value="([^"]+)"\/>/.exec(twiml);
  if (!m) throw new Error('no token parameter in TwiML');
  return m[1]!;
}

export function wsUrl(httpUrl: string, path: string): string {
  return httpUrl.replace(/^http/, 'ws') + path;
}
