import WebSocket from 'ws';
import { EngineError } from '../../core/engine-error.ts';
import type { SttStream, SttStreamEvent, SttStreamOptions, TranscriptWord } from '../types.ts';
import { EventQueue } from './event-queue.ts';

/** Live options: the interface's, plus the wire encoding (phone audio can go to Deepgram as μ-law untouched). */
export interface DeepgramStreamOptions extends SttStreamOptions {
  encoding?: 'linear16' | 'mulaw';
}

interface DgResults {
  type: 'Results';
  start: number;
  duration: number;
  is_final?: boolean;
  speech_final?: boolean;
  channel?: {
    alternatives?: {
      transcript?: string;
      words?: { word: string; punctuated_word?: string; start: number; end: number }[];
    }[];
  };
}

const PROVIDER = 'deepgram';

/**
 * One Deepgram live-transcription socket (`wss://…/v1/listen?…`, `Authorization: Token`). Audio written before
 * the socket opens is buffered; interim results become `partial` events and `is_final` results `final` events;
 * `end()` sends `CloseStream` so Deepgram flushes the last final and closes; a handshake refusal (401, 429, …)
 * or an abnormal close fails the event stream with an EngineError carrying the usual retry policy.
 */
export class DeepgramLiveStream implements SttStream {
  readonly events = new EventQueue<SttStreamEvent>();
  private readonly ws: WebSocket;
  private readonly pending: (Buffer | string)[] = [];
  private lastSend = Date.now();
  private readonly keepAlive: NodeJS.Timeout;
  private closing = false;
  private readonly onAbort = () => {
    this.events.fail(new EngineError(PROVIDER, 'aborted', 'aborted', false));
    this.close();
  };

  constructor(
    url: string,
    key: string,
    keepAliveMs: number,
    private readonly signal?: AbortSignal,
  ) {
    this.ws = new WebSocket(url, { headers: { authorization: `Token ${key}` } });
    this.ws.on('open', () => {
      for (const m of this.pending.splice(0)) this.ws.send(m);
    });
    this.ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(data.toString());
    });
    this.ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        this.events.fail(EngineError.fromStatus(PROVIDER, res.statusCode ?? 502, body));
        this.ws.terminate();
      });
    });
    this.ws.on('error', (e) => this.events.fail(EngineError.network(PROVIDER, e)));
    this.ws.on('close', (code, reason) => {
      clearInterval(this.keepAlive);
      this.signal?.removeEventListener('abort', this.onAbort);
      if (code === 1000 || this.closing) this.events.end();
      else {
        const why = reason.toString() || `socket closed with code ${code}`;
        // 1008 (policy: bad audio or parameters) is permanent; 1011 and the rest are upstream trouble.
        this.events.fail(
          new EngineError(PROVIDER, code === 1008 ? 'bad_request' : 'upstream', `deepgram: ${why}`, code !== 1008),
        );
      }
    });
    this.keepAlive = setInterval(
      () => {
        if (Date.now() - this.lastSend >= keepAliveMs) this.send(JSON.stringify({ type: 'KeepAlive' }));
      },
      Math.max(250, keepAliveMs / 4),
    );
    this.keepAlive.unref();
    if (signal?.aborted) queueMicrotask(this.onAbort);
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  write(pcm: Buffer): void {
    if (pcm.length) this.send(pcm);
  }

  end(): void {
    this.send(JSON.stringify({ type: 'CloseStream' }));
  }

  close(): void {
    this.closing = true;
    clearInterval(this.keepAlive);
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

  private onMessage(text: string): void {
    let msg: { type?: string };
    try {
      msg = JSON.parse(text) as { type?: string };
    } catch {
      return;
    }
    if (msg.type !== 'Results') return; // Metadata, SpeechStarted, UtteranceEnd carry no transcript
    const r = msg as DgResults;
    const alt = r.channel?.alternatives?.[0];
    const transcript = alt?.transcript?.trim() ?? '';
    if (!transcript) return;
    if (r.is_final) {
      const words: TranscriptWord[] = (alt?.words ?? []).map((w) => ({
        word: w.punctuated_word ?? w.word,
        start: w.start,
        end: w.end,
      }));
      this.events.push({ type: 'final', text: transcript, start: r.start, end: r.start + r.duration, words });
    } else this.events.push({ type: 'partial', text: transcript });
  }
}
