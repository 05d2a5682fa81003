import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { mulawToPcm, pcmToMulaw } from '../../kernel/audio/mulaw.ts';
import { FarEndCaller } from './far-end.ts';

/**
 * A synthetic Twilio caller: opens the media-stream socket like Twilio does (connected, start with
 * customParameters, then one 20 ms μ-law `media` frame every 20 ms of wall time — silence when not speaking — and
 * `stop`), and plays the agent's audio like Twilio's buffer (FarEndCaller: in order, in real time, echoing each
 * `mark` once the audio before it has played and every pending mark when `clear` flushes the buffer). This file
 * owns only Twilio's wire format: JSON events with base64 μ-law.
 */
export interface CallerOptions {
  url: string;
  token: string | undefined;
  callSid?: string;
  streamSid?: string;
  /** Extra customParameters. */
  params?: Record<string, string>;
  /** The media clock's speed-up over the wall clock (far-end.ts); 1, real time, when absent. */
  rate?: number;
  /** How many times faster than its media clock the caller plays the agent's audio (far-end.ts); 1 when absent. */
  playout?: number;
}

const FRAME = 160; // 20 ms of 8 kHz μ-law

export class TwilioCaller extends FarEndCaller {
  readonly received: Array<Record<string, unknown>> = [];
  /** Agent audio heard (played) by the caller, as 8 kHz PCM. */
  readonly heard: Buffer[] = [];
  private seq = 1;
  private chunk = 1;
  private tsMs = 0;
  private speech: Buffer[] = [];
  private speechStartPending = false;
  /** performance.now() of the first speech frame of each `say`, in order. */
  readonly speechStarts: number[] = [];
  private readonly streamSid: string;
  private readonly callSid: string;

  constructor(private readonly opts: CallerOptions) {
    super(opts.url, FRAME, 8, opts.rate, opts.playout);
    this.streamSid = opts.streamSid ?? `MZ${Math.random().toString(16).slice(2, 18)}`;
    this.callSid = opts.callSid ?? `CA${Math.random().toString(16).slice(2, 18)}`;
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
    this.startClock();
  }

  protected nextFrame(): void {
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

  protected override played(mulaw: Buffer, bytes: number): void {
    this.heard.push(mulawToPcm(mulaw.subarray(0, bytes)));
  }

  protected sendMark(name: string): void {
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
    return this.spoken(n);
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

  protected receive(data: Buffer): void {
    const m = JSON.parse(data.toString()) as { event: string; media?: { payload: string }; mark?: { name: string } };
    this.received.push(m as Record<string, unknown>);
    const now = performance.now();
    if (m.event === 'media') this.queueAudio(Buffer.from(m.media!.payload, 'base64'), now);
    else if (m.event === 'mark') this.queueMark(m.mark!.name);
    else if (m.event === 'clear') this.flush(now);
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
