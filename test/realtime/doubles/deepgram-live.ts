import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * A Deepgram live-transcription server (`wss://…/v1/listen?encoding=linear16&sample_rate=…`, `Authorization: Token`)
 * with a declared latency profile. It finds speech in the audio by energy, and answers each utterance with the
 * next scripted transcript: interim `Results` (`is_final: false`) while speech goes on, one word more every
 * `interimEveryMs`, and the final (`is_final: true, speech_final: true`) once `finalAfterMs` of silence followed
 * the last speech sample — i.e. the final arrives `finalAfterMs` after the end of speech, as the profile says.
 * `CloseStream` flushes and closes with 1000. Records what each connection received. A silence before the script's
 * words have all been "heard" (one per 150 ms of speech) is a gap between words, not the end of the utterance.
 *
 * A scripted transcript may hold pauses: `Do you have anything on | Tuesday morning?` is said as two stretches of
 * speech (a caller pausing mid-sentence), each answered with its own final, as Deepgram finalizes each segment.
 */
export interface DeepgramProfile {
  finalAfterMs: number;
  interimEveryMs: number;
  /** RMS above this is speech. */
  energyThreshold: number;
}

export interface DeepgramLiveDouble {
  url: string;
  key: string;
  connections: Array<{ query: URLSearchParams; bytes: number; utterances: number; closedWith?: number }>;
  close(): Promise<void>;
}

export async function startDeepgramLiveDouble(
  script: (connection: number, utterance: number) => string,
  profile: Partial<DeepgramProfile> = {},
): Promise<DeepgramLiveDouble> {
  const p: DeepgramProfile = { finalAfterMs: 150, interimEveryMs: 100, energyThreshold: 20, ...profile };
  const key = 'dg-test-key';
  const server: Server = createServer((_req, res) => {
    res.writeHead(404);
    res.end();
  });
  const wss = new WebSocketServer({ noServer: true });
  const double: DeepgramLiveDouble = { url: '', key, connections: [], close: async () => {} };

  server.on('upgrade', (req, socket, head) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname !== '/v1/listen') return socket.destroy();
    if (req.headers.authorization !== `Token ${key}`) {
      socket.end(
        'HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\r\n{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials."}',
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, u.searchParams));
  });

  function serve(ws: WebSocket, query: URLSearchParams): void {
    const conn = { query, bytes: 0, utterances: 0 } as DeepgramLiveDouble['connections'][number];
    const index = double.connections.push(conn) - 1;
    const rate = Number(query.get('sample_rate') ?? 16000);
    let audioMs = 0;
    let speechStart: number | null = null;
    let lastSpeech = 0;
    let lastInterim = 0;
    let text = '';
    let segments: string[] = [];
    const send = (o: unknown) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(o));
    const results = (start: number, end: number, transcript: string, final: boolean) =>
      send({
        type: 'Results',
        channel_index: [0, 1],
        duration: (end - start) / 1000,
        start: start / 1000,
        is_final: final,
        speech_final: final,
        channel: {
          alternatives: [
            {
              transcript,
              confidence: 0.98,
              words: transcript
                .split(/\s+/)
                .filter(Boolean)
                .map((w, i, all) => ({
                  word: w.toLowerCase().replace(/[^\w']/g, ''),
                  punctuated_word: w,
                  start: (start + ((end - start) * i) / all.length) / 1000,
                  end: (start + ((end - start) * (i + 1)) / all.length) / 1000,
                  confidence: 0.98,
                })),
            },
          ],
        },
      });
    const finish = () => {
      if (speechStart === null) return;
      results(speechStart, lastSpeech, text, true);
      speechStart = null;
    };
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        const m = JSON.parse(data.toString()) as { type?: string };
        if (m.type === 'CloseStream') {
          finish();
          send({ type: 'Metadata', request_id: `req-${index}`, duration: audioMs / 1000, channels: 1 });
          conn.closedWith = 1000;
          ws.close(1000);
        }
        return;
      }
      conn.bytes += data.length;
      const n = data.length >> 1;
      const frameMs = (n / rate) * 1000;
      let sum = 0;
      for (let i = 0; i < n; i++) {
        const s = data.readInt16LE(i * 2);
        sum += s * s;
      }
      const rms = Math.sqrt(sum / Math.max(1, n));
      const start = audioMs;
      audioMs += frameMs;
      if (rms >= p.energyThreshold) {
        if (speechStart === null) {
          speechStart = start;
          lastInterim = start;
          if (segments.length === 0) segments = script(index, conn.utterances++).split(/\s*\|\s*/);
          text = segments.shift()!;
        }
        lastSpeech = audioMs;
        if (audioMs - lastInterim >= p.interimEveryMs) {
          lastInterim = audioMs;
          const words = text.split(/\s+/);
          const k = Math.min(words.length, Math.max(1, Math.floor((audioMs - speechStart) / 150)));
          results(speechStart, audioMs, words.slice(0, k).join(' '), false);
        }
      } else if (
        speechStart !== null &&
        audioMs - lastSpeech >= p.finalAfterMs &&
        // A gap inside the scripted words (flite pauses after "And") is not the end: finals follow the words.
        Math.floor((lastSpeech - speechStart) / 150) >= text.split(/\s+/).length
      ) {
        finish();
      }
    });
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  double.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  double.close = async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return double;
}
