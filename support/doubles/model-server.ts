import { createServer, type ServerResponse } from 'node:http';
import { listen, type LocalServer } from './media-server.ts';

/** One POST the double received, with what it fetched from the input URLs (as a real model server would). */
export interface ModelServerCall {
  kind: string;
  body: { inputs: Record<string, string>; params: Record<string, unknown> };
  /** Bytes read from each input URL (the presigned S3 URLs the platform sent). */
  fetched: Record<string, number>;
}

/**
 * A self-hosted GPU engine as the platform sees it, speaking the model-server contract
 * (shared/engines/core/model-server.ts, docs/video.md) on port 0: `GET /health` → `{"status":"ok","kind","model"}`;
 * `POST /v1/<kind>` with `{"inputs": {…_url}, "params": {…}}` → fetches every input URL (a model server has no
 * other way to get them, so an unreachable or unsigned URL fails here as it would on a GPU node), then answers
 * `video/mp4` with X-Duration-Seconds, X-Width and X-Height, or 4xx `{"error":{"message"}}` for a bad request.
 * No model runs: the clip it answers is the one it was given (`mp4`).
 */
export async function startModelServerDouble(
  kind: 'avatar' | 'lipsync' | 'generate',
  model: string,
  mp4: Buffer,
): Promise<LocalServer & { calls: ModelServerCall[] }> {
  const calls: ModelServerCall[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const required: Record<string, string[]> = {
    avatar: ['image_url', 'audio_url'],
    lipsync: ['video_url', 'audio_url'],
    generate: [],
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method === 'GET' && req.url === '/health') return json(res, 200, { status: 'ok', kind, model });
        if (req.method !== 'POST' || req.url !== `/v1/${kind}`) {
          return json(res, 404, { error: { message: 'no such route' } });
        }
        let body: ModelServerCall['body'];
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ModelServerCall['body'];
        } catch {
          return json(res, 400, { error: { message: 'body is not JSON' } });
        }
        const missing = required[kind]!.filter((k) => typeof body.inputs?.[k] !== 'string');
        if (missing.length) return json(res, 400, { error: { message: `inputs missing ${missing.join(', ')}` } });
        const fetched: Record<string, number> = {};
        for (const [k, url] of Object.entries(body.inputs)) {
          const r = await fetch(url);
          if (!r.ok) return json(res, 400, { error: { message: `${k}: fetching the input answered ${r.status}` } });
          fetched[k] = (await r.arrayBuffer()).byteLength;
        }
        calls.push({ kind, body, fetched });
        res
          .writeHead(200, {
            'content-type': 'video/mp4',
            'x-duration-seconds': '2',
            'x-width': '256',
            'x-height': '256',
          })
          .end(mp4);
      })().catch((e: Error) => json(res, 500, { error: { message: e.message } }));
    });
  });
  const url = await listen(server);
  return { url, calls, close: () => new Promise<void>((r) => server.close(() => r())) };
}
