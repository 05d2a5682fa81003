import WebSocket from 'ws';
import { EngineError } from '../../../kernel/errors/engine-error.ts';
import type { SttStream, SttStreamEvent } from '../types.ts';
import { EventQueue } from './event-queue.ts';

/** What differs between vendors' live-transcription sockets; the socket plumbing is shared. */
export interface LiveSocketSpec {
  provider: string;
  url: string;
  headers: Record<string, string>;
  /** Text frame that asks the vendor to flush the last result and close (or `onEnd` for a longer dance). */
  endMessage?: string;
  onEnd?(ctl: LiveSocketControl): void;
  /** Text frames sent first, once the socket opens (session configuration). */
  openMessages?: string[];
  /** How audio goes on the wire (default: the PCM as a binary frame); may return nothing yet (buffering). */
  encodeAudio?(pcm: Buffer): (Buffer | string)[];
  /** Text frame sent when no audio went out for `everyMs` (vendors close idle sockets). */
  keepAlive?: { message: string; everyMs: number };
  /** Turns one text frame into zero or more events. */
  onText(text: string, emit: (e: SttStreamEvent) => void, ctl: LiveSocketControl): void;
  /** The error for a close that was not asked for (code other than 1000). */
  closeError(code: number, reason: string): EngineError;
}

/** What a vendor spec may do to its socket from a message handler. */
export interface LiveSocketControl {
  send(m: Buffer | string): void;
  /** Ends the events normally and closes the socket (the vendor does not close it itself). */
  close(): void;
  fail(e: EngineError): void;
}

/**
 * A live-transcription WebSocket: audio written before the socket opens is buffered; `end()` sends the vendor's
 * flush-and-close frame; the events end when the vendor closes normally. A refused handshake maps its HTTP status
 * with EngineError.fromStatus (401 permanent auth, 429/5xx retryable); an abnormal close maps with `closeError`;
 * an aborted signal fails the events as `aborted` and closes the socket.
 */
export class LiveSocketStream implements SttStream {
  readonly events = new EventQueue<SttStreamEvent>();
  private readonly ws: WebSocket;
  private readonly pending: (Buffer | string)[] = [];
  private lastSend = Date.now();
  private readonly keepAlive?: NodeJS.Timeout;
  private closing = false;
  private readonly onAbort = () => {
    this.events.fail(new EngineError(this.spec.provider, 'aborted', 'aborted', false));
    this.close();
  };

  constructor(
    private readonly spec: LiveSocketSpec,
    private readonly signal?: AbortSignal,
  ) {
    const provider = spec.provider;
    this.ws = new WebSocket(spec.url, { headers: spec.headers });
    this.ws.on('open', () => {
      for (const m of spec.openMessages ?? []) this.ws.send(m);
      for (const m of this.pending.splice(0)) this.ws.send(m);
    });
    this.ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      try {
        spec.onText(data.toString(), (e) => this.events.push(e), this.ctl);
      } catch {
        /* a frame we cannot read carries nothing we can use */
      }
    });
    this.ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        this.events.fail(EngineError.fromStatus(provider, res.statusCode ?? 502, body));
        this.ws.terminate();
      });
    });
    this.ws.on('error', (e) => this.events.fail(EngineError.network(provider, e)));
    this.ws.on('close', (code, reason) => {
      if (this.keepAlive) clearInterval(this.keepAlive);
      this.signal?.removeEventListener('abort', this.onAbort);
      if (code === 1000 || this.closing) this.events.end();
      else this.events.fail(spec.closeError(code, reason.toString()));
    });
    if (spec.keepAlive) {
      const { message, everyMs } = spec.keepAlive;
      this.keepAlive = setInterval(
        () => {
          if (Date.now() - this.lastSend >= everyMs) this.send(message);
        },
        Math.max(250, everyMs / 4),
      );
      this.keepAlive.unref();
    }
    if (signal?.aborted) queueMicrotask(this.onAbort);
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private readonly ctl: LiveSocketControl = {
    send: (m) => this.send(m),
    close: () => this.close(),
    fail: (e) => {
      this.events.fail(e);
      this.close();
    },
  };

  write(pcm: Buffer): void {
    if (!pcm.length) return;
    if (this.spec.encodeAudio) for (const m of this.spec.encodeAudio(pcm)) this.send(m);
    else this.send(pcm);
  }

  end(): void {
    if (this.spec.onEnd) this.spec.onEnd(this.ctl);
    else if (this.spec.endMessage) this.send(this.spec.endMessage);
  }

  close(): void {
    this.closing = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.events.end();
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    else if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
  }

  private send(m: Buffer | string): void {
    if (this.closing || this.events.ended) return;
    this.lastSend = Date.now();
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(m);
    else if (this.ws.readyState === WebSocket.CONNECTING) this.pending.push(m);
  }
}
