import WebSocket from 'ws';
import { TwilioCaller, type CallerOptions } from './twilio-caller.ts';
import { DirectCaller } from './direct-caller.ts';
import { DelayedSends } from './delayed-sends.ts';
import type { LineImpairment, MulawCodec } from './impairments.ts';

/**
 * The voice-latency benchmark's scripted Twilio caller (real-time 20 ms μ-law frames over the media-stream socket,
 * Twilio's playback and mark model) with a bad line between it and the platform: every outgoing `media` frame
 * goes through the scenario's seeded impairment (noise, loss, jitter). Control messages (start, mark, stop) are
 * never impaired, as Twilio's signalling is not.
 */
export class ImpairedCaller extends TwilioCaller {
  private readonly delayed = new DelayedSends<string>((out) => {
    if (this.ws.readyState === WebSocket.OPEN) super.sendRaw(out);
  });

  constructor(
    opts: CallerOptions,
    private readonly line: LineImpairment | null,
  ) {
    super(opts);
  }

  override sendRaw(data: string | Buffer, binary = false): void {
    if (!this.line || typeof data !== 'string' || !data.startsWith('{"event":"media"')) {
      return super.sendRaw(data, binary);
    }
    const msg = JSON.parse(data) as { media: { payload: string } };
    const fate = this.line.apply(Buffer.from(msg.media.payload, 'base64'));
    if (!fate.frame) return;
    msg.media.payload = fate.frame.toString('base64');
    this.delayed.after(fate.delayMs, JSON.stringify(msg));
  }

  override close(): void {
    this.delayed.cancel();
    super.close();
  }
}

/**
 * The direct-protocol caller over the same kind of bad line: every outgoing 20 ms PCM frame (16 kHz, so the line's
 * codec is PCM itself: `PCM_LINE`) goes through the scenario's seeded impairment. Control messages (mark, stop)
 * are never impaired.
 */
export class ImpairedDirectCaller extends DirectCaller {
  private readonly delayed = new DelayedSends<Buffer>((out) => super.sendFrame(out));

  constructor(
    url: string,
    private readonly line: LineImpairment | null,
    playout = 1,
  ) {
    super(url, playout);
  }

  protected override sendFrame(frame: Buffer): void {
    if (!this.line) return super.sendFrame(frame);
    const fate = this.line.apply(frame);
    if (fate.frame) this.delayed.after(fate.delayMs, fate.frame);
  }

  override close(): void {
    this.delayed.cancel();
    super.close();
  }
}

/** The line "codec" of a transport that carries PCM itself (the direct protocol): impairments work on it as is. */
export const PCM_LINE: MulawCodec = { mulawToPcm: (pcm) => Buffer.from(pcm), pcmToMulaw: (pcm) => pcm };
