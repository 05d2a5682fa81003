import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { resamplePcm } from '../../kernel/audio/resampler.ts';
import { FarEndCaller } from './far-end.ts';

/**
 * A scripted caller on the direct protocol (docs/realtime.md, WS /v1/agents/:id/session), the browser's path: one
 * 20 ms binary PCM16LE 16 kHz frame every 20 ms of wall time (silence when not speaking), and the agent's 16 kHz
 * audio played like the browser page plays it (FarEndCaller: in order, in real time, each `mark` echoed once the
 * audio before it has played, every pending mark echoed when `clear` flushes the queue). The same shape as the
 * Twilio caller, so a scenario runs on either transport unchanged; this file owns only the wire format: binary
 * PCM frames and JSON mark/clear/stop.
 */
const RATE = 16000;
const FRAME = (RATE / 1000) * 20 * 2; // 640 bytes: 20 ms of 16 kHz PCM16

export class DirectCaller extends FarEndCaller {
  /** The server's JSON events other than marks and clears (session.started, transcript, error, …). */
  readonly events: Record<string, unknown>[] = [];
  private speech: Buffer[] = [];

  /**
   * `url`: the socket URL with its session token (POST /v1/sessions/direct answers it); `playout`: how many times
   * faster than real time the agent's audio is played (far-end.ts), 1 unless a test asks otherwise.
   */
  constructor(url: string, playout = 1) {
    super(url, FRAME, (RATE / 1000) * 2, 1, playout);
  }

  /** Connects and starts the real-time audio clock. */
  async start(): Promise<void> {
    await this.opened;
    this.startClock();
  }

  protected nextFrame(): void {
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

  protected sendMark(name: string): void {
    this.ws.send(JSON.stringify({ type: 'mark', name }));
  }

  /**
   * Queues speech given at the phone voice's 8 kHz (the scenario's caller audio), sent at the protocol's 16 kHz; it
   * goes out in real time. Resolves with the time its last frame was sent.
   */
  say(pcm8k: Buffer): Promise<number> {
    const n = this.speechEnds.length;
    this.speech.push(resamplePcm(pcm8k, 8000, RATE));
    return this.spoken(n);
  }

  /** Hangs up the way a client does: `stop` (the session ends with reason caller-hangup). */
  stop(): void {
    this.stopTicker();
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'stop' }));
  }

  protected receive(data: Buffer, isBinary: boolean): void {
    const now = performance.now();
    if (isBinary) {
      this.queueAudio(Buffer.from(data), now);
      return;
    }
    const m = JSON.parse(data.toString('utf8')) as { type: string; name?: string };
    if (m.type === 'mark') this.queueMark(m.name ?? '');
    else if (m.type === 'clear') this.flush(now);
    else this.events.push(m);
  }
}
