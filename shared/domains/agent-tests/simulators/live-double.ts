import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { SCRIPT } from './transcript.ts';

/**
 * Shared machinery of live-transcription WebSocket doubles: a server on port 0 that refuses bad handshakes with
 * an HTTP status and the vendor's JSON body, records each connection, "recognises" scripted utterances from the
 * energy of the audio it receives (linear16 or μ-law) with endpointing by silence, and sends messages in order
 * after the delays of a declared latency profile. A vendor may bring its own speech model instead (`listen`).
 */

export interface LatencyProfile {
  /** Accepting the WebSocket upgrade. */
  connectMs: number;
  /** From the audio that changed the hypothesis to the interim result. */
  interimMs: number;
  /** Minimum spacing of interim results. */
  interimEveryMs: number;
  /** From the end of the endpointing silence (or a flush) to the final result. */
  finalMs: number;
}

export const FAST: LatencyProfile = { connectMs: 0, interimMs: 0, interimEveryMs: 100, finalMs: 0 };

/**
 * What the caller says: lines said in turn (across connections, cycling), or the line of connection `connection`'s
 * `utterance`-th utterance (a test that scripts each call).
 */
export type Script = string[] | ((connection: number, utterance: number) => string);

export interface LiveConnection {
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  audioBytes: number;
  /** Binary (audio) messages received: how many writes the client made. */
  audioMessages: number;
  /** Text frames the client sent, by their `type` (or `message_type`). */
  controls: string[];
  /** Every message the double sent, parsed. */
  sent: Record<string, unknown>[];
  closeCode?: number;
}

export interface Utterance {
  /** Audio seconds. */
  start: number;
  last: number;
  words: string[];
  interims: number;
}

export interface LiveDouble {
  url: string;
  key: string;
  /** Utterances recognised in order, one per stretch of speech. */
  script: Script;
  latency: LatencyProfile;
  connections: LiveConnection[];
  /** The next handshake is refused with this HTTP status. */
  failNextHandshake(status: number): void;
  /** Closes every open socket with a code, as the vendor does on its own errors. */
  dropAll(code: number, reason: string): void;
  /** While muted the double takes audio and answers nothing (a stalled vendor); its sockets stay open. */
  mute(on: boolean): void;
  close(): Promise<void>;
}

/** Per-connection hooks of one vendor's protocol. */
export interface Session {
  conn: LiveConnection;
  /** Sends a message after `afterMs`, never before an earlier one; at once when 0 and nothing is queued. */
  send(msg: Record<string, unknown>, afterMs: number): void;
  /** Closes after everything queued has gone out. */
  closeAfterQueued(code: number): void;
  /** Closes now, as the vendor does on a protocol violation. */
  close(code: number, reason: string): void;
  /** Ends the utterance in progress (if any) and returns it. */
  flush(): Utterance | null;
  audioSeconds(): number;
  /** Audio that arrived inside a text frame (base64 in JSON), as vendors with JSON-only sockets send it. */
  audio(bytes: Buffer): void;
  /** The audio format, when a session message (not the URL) sets it. */
  setFormat(encoding: 'linear16' | 'mulaw', sampleRate: number): void;
  /** The script's next line for this connection. */
  nextLine(): string;
}

export interface LiveVendor {
  path: string;
  /** Why a handshake is refused, or null: [status, message]. */
  refuse(query: URLSearchParams, headers: IncomingHttpHeaders, key: string): [number, string] | null;
  errorBody(status: number, message: string): string;
  encoding(query: URLSearchParams): 'linear16' | 'mulaw';
  sampleRate(query: URLSearchParams): number;
  /** Silence that ends an utterance, seconds. */
  endpointingS(query: URLSearchParams): number;
  onOpen?(s: Session): void;
  onInterim(s: Session, u: Utterance): void;
  onFinal(s: Session, u: Utterance, reason: 'endpoint' | 'flush'): void;
  onControl(s: Session, type: string, msg: Record<string, unknown>): void;
  /** Sees each binary audio message before it is "heard" (size rules). */
  onAudioMessage?(s: Session, bytes: number): void;
  /**
   * A speech model of the vendor double's own, replacing the built-in endpointing (and onInterim/onFinal): called
   * once per connection, it returns what hears each audio chunk, given its RMS and length in seconds.
   */
  listen?(s: Session): (rms: number, seconds: number) => void;
}

const SPEECH_RMS = 500;

function mulawToLinear(b: number): number {
  const u = ~b & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

function rmsOf(audio: Buffer, encoding: string): number {
  let sum = 0;
  let n = 0;
  if (encoding === 'mulaw') {
    for (const b of audio) sum += mulawToLinear(b) ** 2;
    n = audio.length;
  } else {
    for (let i = 0; i + 1 < audio.length; i += 2) sum += audio.readInt16LE(i) ** 2;
    n = audio.length / 2;
  }
  return n ? Math.sqrt(sum / n) : 0;
}

export async function startLiveDouble(
  vendor: LiveVendor,
  opts: { latency?: LatencyProfile; script?: Script; key: string },
): Promise<LiveDouble> {
  const http = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  const handshakeFailures: number[] = [];
  const sockets = new Set<WebSocket>();
  let scriptPos = 0;
  let muted = false;

  const double: LiveDouble = {
    url: '',
    key: opts.key,
    script: opts.script ?? [SCRIPT],
    latency: opts.latency ?? FAST,
    connections: [],
    failNextHandshake: (status) => void handshakeFailures.push(status),
    dropAll(code, reason) {
      for (const s of sockets) s.close(code, reason);
    },
    mute: (on) => void (muted = on),
    async close() {
      for (const s of sockets) s.terminate();
      wss.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };

  const refuse = (socket: Duplex, status: number, msg: string) => {
    const body = vendor.errorBody(status, msg);
    socket.end(
      `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `connection: close\r\n\r\n${body}`,
    );
  };

  http.on('upgrade', (req, socket, head) => {
    const u = new URL(req.url ?? '/', 'http://double');
    const failure = handshakeFailures.shift();
    if (failure) return refuse(socket, failure, `injected ${failure}`);
    if (u.pathname !== vendor.path) return refuse(socket, 404, 'no such path');
    const why = vendor.refuse(u.searchParams, req.headers, double.key);
    if (why) return refuse(socket, why[0], why[1]);
    const accept = () => wss.handleUpgrade(req, socket, head, (ws) => serve(ws, u.searchParams, req.headers));
    // A 0 ms profile accepts at once, not a timer tick later.
    if (double.latency.connectMs > 0) setTimeout(accept, double.latency.connectMs);
    else accept();
  });

  function serve(ws: WebSocket, query: URLSearchParams, headers: IncomingHttpHeaders): void {
    sockets.add(ws);
    const conn: LiveConnection = { query, headers, audioBytes: 0, audioMessages: 0, controls: [], sent: [] };
    const index = double.connections.push(conn) - 1;
    let utterances = 0;
    let encoding = vendor.encoding(query);
    let bytesPerSecond = vendor.sampleRate(query) * (encoding === 'mulaw' ? 1 : 2);
    const endpointingS = vendor.endpointingS(query);
    let audioTime = 0;
    let speech: Utterance | null = null;
    let lastInterimAt = 0;
    let finalizedUpTo = 0;
    let lastAt = 0;
    let queued = 0;
    const deliver = (msg: Record<string, unknown>) => {
      if (ws.readyState !== ws.OPEN || muted) return;
      conn.sent.push(msg);
      ws.send(JSON.stringify(msg));
    };

    const session: Session = {
      conn,
      send(msg, afterMs) {
        // Without a declared delay a message goes out in the tick that caused it, as from a vendor's own loop: a
        // timer would add event-loop lag that no profile declared (latency benchmarks time these messages).
        if (afterMs <= 0 && queued === 0) return deliver(msg);
        lastAt = Math.max(Date.now() + afterMs, lastAt);
        queued++;
        setTimeout(() => {
          queued--;
          deliver(msg);
        }, lastAt - Date.now());
      },
      close(code, reason) {
        ws.close(code, reason);
      },
      closeAfterQueued(code) {
        setTimeout(() => ws.close(code), Math.max(0, lastAt - Date.now()) + 5);
      },
      flush() {
        const u = speech;
        if (u) finalizedUpTo = u.last;
        speech = null;
        return u;
      },
      audioSeconds: () => audioTime,
      audio: (bytes) => onAudio(bytes),
      setFormat(enc, rate) {
        encoding = enc;
        bytesPerSecond = rate * (enc === 'mulaw' ? 1 : 2);
      },
      nextLine() {
        const s = double.script;
        return typeof s === 'function' ? s(index, utterances++) : s[scriptPos++ % s.length]!;
      },
    };
    const nextUtterance = () => session.nextLine().split(/\s+/).filter(Boolean);
    vendor.onOpen?.(session);
    const ear = vendor.listen?.(session);

    ws.on('message', (data, isBinary) => {
      if (!isBinary) {
        let msg: Record<string, unknown> = {};
        try {
          msg = JSON.parse(data.toString()) as Record<string, unknown>;
        } catch {
          /* recorded as invalid */
        }
        const kind = msg.type ?? msg.message_type;
        const type = typeof kind === 'string' ? kind : 'invalid';
        conn.controls.push(type);
        vendor.onControl(session, type, msg);
        return;
      }
      vendor.onAudioMessage?.(session, (data as Buffer).length);
      onAudio(data as Buffer);
    });
    function onAudio(audio: Buffer): void {
      conn.audioBytes += audio.length;
      conn.audioMessages++;
      const chunkStart = audioTime;
      const seconds = audio.length / bytesPerSecond;
      audioTime += seconds;
      const rms = rmsOf(audio, encoding);
      if (ear) return ear(rms, seconds);
      if (rms >= SPEECH_RMS) {
        if (!speech)
          speech = { start: Math.max(chunkStart, finalizedUpTo), last: audioTime, words: nextUtterance(), interims: 0 };
        speech.last = audioTime;
        const now = Date.now();
        if (now - lastInterimAt >= double.latency.interimEveryMs) {
          lastInterimAt = now;
          speech.interims++;
          vendor.onInterim(session, { ...speech, words: [...speech.words] });
        }
      } else if (speech && audioTime - speech.last >= endpointingS) {
        vendor.onFinal(session, session.flush()!, 'endpoint');
      }
    }
    ws.on('close', (code) => {
      conn.closeCode = code;
      sockets.delete(ws);
    });
  }

  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  double.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return double;
}

/** Words of an utterance spread over its audio time, in seconds. */
export function timedWords(u: Utterance, words = u.words): { word: string; start: number; end: number }[] {
  const step = (u.last - u.start) / Math.max(1, u.words.length);
  return words.map((word, i) => ({
    word,
    start: Number((u.start + i * step).toFixed(3)),
    end: Number((u.start + (i + 1) * step).toFixed(3)),
  }));
}
