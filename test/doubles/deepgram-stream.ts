import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { SCRIPT } from './transcript.ts';

/**
 * Deepgram live transcription double: the `/v1/listen` WebSocket as Deepgram speaks it. Auth
 * `Authorization: Token <key>` (a refused handshake answers HTTP 401 with Deepgram's JSON error body). It decodes
 * the audio it receives (linear16 or mulaw, at the query's sample_rate), finds speech by energy, and answers
 * with the scripted utterances: interim `Results` while speech goes on, then `is_final`/`speech_final` once the
 * query's `endpointing` silence has passed; `Finalize` flushes, `CloseStream` flushes, sends `Metadata` and
 * closes 1000, `KeepAlive` is recorded. Timings follow a declared latency profile, so a realtime pipeline test
 * can budget for them.
 */

export interface DeepgramLatencyProfile {
  /** Accepting the WebSocket upgrade. */
  connectMs: number;
  /** From the audio that changed the hypothesis to the interim `Results`. */
  interimMs: number;
  /** Minimum spacing of interim results. */
  interimEveryMs: number;
  /** From the end of the endpointing silence to the final `Results`. */
  finalMs: number;
}

export const DEEPGRAM_FAST: DeepgramLatencyProfile = { connectMs: 0, interimMs: 0, interimEveryMs: 100, finalMs: 0 };
/** Roughly what Deepgram's hosted nova models show on a good link. */
export const DEEPGRAM_TYPICAL: DeepgramLatencyProfile = {
  connectMs: 80,
  interimMs: 150,
  interimEveryMs: 250,
  finalMs: 120,
};

export interface LiveConnection {
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  audioBytes: number;
  /** Text frames the client sent (KeepAlive, Finalize, CloseStream), by type. */
  controls: string[];
  /** Every message the double sent, parsed. */
  sent: Record<string, unknown>[];
  closeCode?: number;
}

export interface DeepgramStreamDouble {
  url: string;
  key: string;
  /** Utterances recognised in order, one per detected stretch of speech (cycles when exhausted). */
  script: string[];
  latency: DeepgramLatencyProfile;
  connections: LiveConnection[];
  /** The next handshake is refused with this HTTP status (Deepgram's JSON error body). */
  failNextHandshake(status: number): void;
  /** Closes every open socket with a code (e.g. 1011 as Deepgram does on an internal error). */
  dropAll(code: number, reason: string): void;
  close(): Promise<void>;
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

export async function startDeepgramStreamDouble(
  opts: { latency?: DeepgramLatencyProfile; script?: string[]; key?: string } = {},
): Promise<DeepgramStreamDouble> {
  const http = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  const handshakeFailures: number[] = [];
  const sockets = new Set<WebSocket>();
  let scriptPos = 0;

  const double: DeepgramStreamDouble = {
    url: '',
    key: opts.key ?? 'test-key-deepgram',
    script: opts.script ?? [SCRIPT],
    latency: opts.latency ?? DEEPGRAM_FAST,
    connections: [],
    failNextHandshake: (status) => void handshakeFailures.push(status),
    dropAll(code, reason) {
      for (const s of sockets) s.close(code, reason);
    },
    async close() {
      for (const s of sockets) s.terminate();
      wss.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };

  const refuse = (socket: Duplex, status: number, code: string, msg: string) => {
    const body = JSON.stringify({ err_code: code, err_msg: msg, request_id: 'req-double' });
    socket.end(
      `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `dg-error: ${msg}\r\nconnection: close\r\n\r\n${body}`,
    );
  };

  http.on('upgrade', (req, socket, head) => {
    const u = new URL(req.url ?? '/', 'http://double');
    const failure = handshakeFailures.shift();
    if (failure) return refuse(socket, failure, failure === 429 ? 'TOO_MANY_REQUESTS' : 'ERROR', `injected ${failure}`);
    if (u.pathname !== '/v1/listen') return refuse(socket, 404, 'NOT_FOUND', 'no such path');
    if (req.headers.authorization !== `Token ${double.key}`) {
      return refuse(socket, 401, 'INVALID_AUTH', 'Invalid credentials.');
    }
    const rate = Number(u.searchParams.get('sample_rate'));
    const encoding = u.searchParams.get('encoding') ?? '';
    if (!['linear16', 'mulaw'].includes(encoding) || !(rate > 0)) {
      return refuse(socket, 400, 'Bad Request', 'encoding and sample_rate are required for raw audio');
    }
    setTimeout(
      () => wss.handleUpgrade(req, socket, head, (ws) => serve(ws, u.searchParams, req.headers)),
      double.latency.connectMs,
    );
  });

  function serve(ws: WebSocket, query: URLSearchParams, headers: IncomingHttpHeaders): void {
    sockets.add(ws);
    const conn: LiveConnection = { query, headers, audioBytes: 0, controls: [], sent: [] };
    double.connections.push(conn);
    const encoding = query.get('encoding')!;
    const bytesPerSecond = Number(query.get('sample_rate')) * (encoding === 'mulaw' ? 1 : 2);
    const endpointingS = Number(query.get('endpointing') ?? 10) / 1000;
    const interim = query.get('interim_results') === 'true';
    let audioTime = 0; // seconds of audio received
    let speech: { start: number; last: number; words: string[]; interims: number } | null = null;
    let lastInterimAt = 0;
    let finalizedUpTo = 0;

    // Messages keep their order even when a later one has a shorter declared latency (as on one socket).
    let lastAt = 0;
    const send = (msg: Record<string, unknown>, afterMs: number) => {
      lastAt = Math.max(Date.now() + afterMs, lastAt);
      setTimeout(() => {
        if (ws.readyState !== ws.OPEN) return;
        conn.sent.push(msg);
        ws.send(JSON.stringify(msg));
      }, lastAt - Date.now());
    };
    const results = (
      start: number,
      end: number,
      words: string[],
      isFinal: boolean,
      speechFinal: boolean,
      extra = {},
    ) => {
      const step = (end - start) / Math.max(1, words.length);
      return {
        type: 'Results',
        channel_index: [0, 1],
        duration: Number((end - start).toFixed(3)),
        start: Number(start.toFixed(3)),
        is_final: isFinal,
        speech_final: speechFinal,
        channel: {
          alternatives: [
            {
              transcript: words.join(' '),
              confidence: 0.98,
              words: words.map((w, i) => ({
                word: w.toLowerCase().replace(/[^\w']/g, ''),
                punctuated_word: w,
                start: Number((start + i * step).toFixed(3)),
                end: Number((start + (i + 1) * step).toFixed(3)),
                confidence: 0.98,
              })),
            },
          ],
        },
        metadata: { request_id: 'req-double', model_info: { name: 'double' } },
        ...extra,
      };
    };
    const nextUtterance = () => {
      const text = double.script[scriptPos % double.script.length]!;
      scriptPos++;
      return text.split(/\s+/).filter(Boolean);
    };
    const finalize = (speechFinal: boolean, extra = {}) => {
      if (!speech) return;
      send(results(speech.start, speech.last, speech.words, true, speechFinal, extra), double.latency.finalMs);
      finalizedUpTo = speech.last;
      speech = null;
    };

    ws.on('message', (data, isBinary) => {
      if (!isBinary) {
        let type = 'invalid';
        try {
          type = String((JSON.parse(data.toString()) as { type?: unknown }).type);
        } catch {
          /* recorded as invalid */
        }
        conn.controls.push(type);
        if (type === 'Finalize') finalize(false, { from_finalize: true });
        if (type === 'CloseStream') {
          finalize(true);
          send(
            { type: 'Metadata', request_id: 'req-double', duration: audioTime, channels: 1 },
            double.latency.finalMs,
          );
          setTimeout(() => ws.close(1000), lastAt - Date.now() + 5);
        }
        return;
      }
      const audio = data as Buffer;
      conn.audioBytes += audio.length;
      const chunkStart = audioTime;
      audioTime += audio.length / bytesPerSecond;
      if (rmsOf(audio, encoding) >= SPEECH_RMS) {
        if (!speech)
          speech = { start: Math.max(chunkStart, finalizedUpTo), last: audioTime, words: nextUtterance(), interims: 0 };
        speech.last = audioTime;
        const now = Date.now();
        if (interim && now - lastInterimAt >= double.latency.interimEveryMs) {
          lastInterimAt = now;
          // The hypothesis grows with the speech heard so far: one more word per interim.
          const heard = ++speech.interims;
          send(
            results(speech.start, speech.last, speech.words.slice(0, heard), false, false),
            double.latency.interimMs,
          );
        }
      } else if (speech && audioTime - speech.last >= endpointingS) {
        finalize(true);
      }
    });
    ws.on('close', (code) => {
      conn.closeCode = code;
      sockets.delete(ws);
    });
  }

  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  double.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return double;
}
