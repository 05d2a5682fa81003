import { createServer, type ServerResponse } from 'node:http';
import { listen, type LocalServer } from './media-server.ts';
import { startReplicateDouble, type ReplicateDouble } from './replicate.ts';

export interface Call {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface VendorDouble extends LocalServer {
  calls: Call[];
  /** Replicate's own double (see `replicate.ts`), on its own URL: point `REPLICATE_BASE_URL` at `replicate.url`. */
  replicate: ReplicateDouble;
  /** Until the returned function is called, every vendor job (Replicate's too) reports "processing" on each poll. */
  holdJobs(): () => void;
}

export interface VendorDoubleOptions {
  /** Bearer tokens the Replicate double accepts (by default only its own `replicate.key`). */
  replicateKeys?: Iterable<string>;
}

/**
 * One local server speaking the wire formats of HeyGen (upload + v2 generate + v1 status), Sync Labs (v2
 * generate), Luma (dream-machine v1 generations), Runway, Twelve Labs and our model-server contract, recording
 * every request, plus the shared Replicate predictions double (`replicate`, its own server) serving `mp4`. Jobs
 * report "processing" on the first poll and "completed" on the next (or, while `holdJobs` holds them,
 * "processing" until released); outputs are a real small MP4.
 */
export async function startVendorDouble(mp4: Buffer, opts: VendorDoubleOptions = {}): Promise<VendorDouble> {
  const replicate = await startReplicateDouble({ mp4, keys: opts.replicateKeys });
  const calls: Call[] = [];
  const polls = new Map<string, number>();
  let held = false;
  let url = '';
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      calls.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks) });
      const poll = (id: string) => {
        if (held) return false;
        const n = (polls.get(id) ?? 0) + 1;
        polls.set(id, n);
        return n >= 2;
      };
      if (path === '/files/out.mp4') return res.writeHead(200, { 'content-type': 'video/mp4' }).end(mp4);
      // HeyGen
      if (path === '/v1/talking_photo') return json(res, 200, { code: 100, data: { talking_photo_id: 'tp_1' } });
      if (path === '/v2/video/generate') return json(res, 200, { error: null, data: { video_id: 'hv_1' } });
      if (path.startsWith('/v1/video_status.get')) {
        const done = poll('hv_1');
        return json(res, 200, {
          code: 100,
          data: { status: done ? 'completed' : 'processing', video_url: done ? `${url}/files/out.mp4` : null },
        });
      }
      // Sync Labs
      if (path === '/v2/generate' && req.method === 'POST') return json(res, 201, { id: 'sg_1', status: 'PENDING' });
      if (path === '/v2/generate/sg_1') {
        const done = poll('sg_1');
        return json(res, 200, {
          id: 'sg_1',
          status: done ? 'COMPLETED' : 'PROCESSING',
          outputUrl: done ? `${url}/files/out.mp4` : null,
        });
      }
      // Luma
      if (path === '/dream-machine/v1/generations') return json(res, 201, { id: 'lu_1', state: 'queued' });
      if (path === '/dream-machine/v1/generations/lu_1') {
        const done = poll('lu_1');
        return json(res, 200, {
          id: 'lu_1',
          state: done ? 'completed' : 'dreaming',
          assets: done ? { video: `${url}/files/out.mp4` } : null,
        });
      }
      // Model server: analysis
      if (path === '/v1/analyze') {
        return json(res, 200, {
          scenes: [
            {
              start: 0,
              end: 2,
              description: 'a person talking',
              ocr_text: '',
              face_count: 1,
              motion: 0.1,
              dominant_color: '#aa8866',
            },
          ],
        });
      }
      // Runway
      if (path === '/v1/text_to_video') return json(res, 200, { id: 'rw_1' });
      if (path === '/v1/tasks/rw_1') {
        const done = poll('rw_1');
        return json(res, 200, {
          id: 'rw_1',
          status: done ? 'SUCCEEDED' : 'RUNNING',
          output: done ? [`${url}/files/out.mp4`] : undefined,
        });
      }
      // Twelve Labs v1.3
      if (path.startsWith('/v1.3/indexes?')) return json(res, 200, { data: [] });
      if (path === '/v1.3/indexes') return json(res, 201, { _id: 'ix_1' });
      if (path === '/v1.3/tasks') return json(res, 201, { _id: 'tk_1', video_id: 'vd_1' });
      if (path === '/v1.3/tasks/tk_1') {
        const done = poll('tk_1');
        return json(res, 200, { _id: 'tk_1', status: done ? 'ready' : 'indexing', video_id: 'vd_1' });
      }
      if (path === '/v1.3/summarize') {
        return json(res, 200, {
          id: 'sm_1',
          summarize_type: 'chapter',
          chapters: [
            {
              chapter_number: 0,
              start_sec: 0,
              end_sec: 2,
              chapter_title: 'Greeting',
              chapter_summary: 'A woman says hello.',
            },
          ],
        });
      }
      if (path === '/v1.3/indexes/ix_1/videos/vd_1?transcription=true') {
        return json(res, 200, { _id: 'vd_1', transcription: [{ start: 0, end: 1.5, value: 'Hello there' }] });
      }
      // Model server
      if (path === '/health') return json(res, 200, { status: 'ok', kind: 'lipsync', model: 'double' });
      if (path === '/v1/lipsync') return res.writeHead(200, { 'content-type': 'video/mp4' }).end(mp4);
      json(res, 404, { error: { message: 'no such route' } });
    });
  });
  url = await listen(server);
  return {
    url,
    calls,
    replicate,
    holdJobs() {
      held = true;
      const releaseReplicate = replicate.hold();
      return () => {
        held = false;
        releaseReplicate();
      };
    },
    close: async () => {
      await Promise.all([new Promise<void>((r) => server.close(() => r())), replicate.close()]);
    },
  };
}
