import { randomBytes } from 'node:crypto';
import { tone, wav } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

export interface ReplicateDoubleOptions {
  /** Bearer tokens the double accepts, instead of its single `key` (e.g. a platform token and a caller's). */
  keys?: Iterable<string>;
  /** The MP4 a video prediction (`input: {video, audio}`, e.g. `sync/lipsync-2`) outputs; without it they are 400. */
  mp4?: Buffer;
}

export interface ReplicateDoubleState {
  /** Ids of predictions the client cancelled. */
  canceled: Set<string>;
  /** How many GETs a prediction stays `processing` before it succeeds. */
  pollsToSucceed: number;
  /** Until the returned function is called, every prediction stays `processing` (its polls do not count). */
  hold(): () => void;
}

export type ReplicateDouble = HttpDouble & ReplicateDoubleState;

/**
 * Replicate predictions: `POST /v1/models/{owner}/{name}/predictions` or `POST /v1/predictions` ({version})
 * → a prediction that is `starting`, then `processing`, then `succeeded` on successive `GET /v1/predictions/{id}`,
 * with `output` a file URL served without auth: a WAV for a speech model (`input.text`), the given MP4 for a
 * video model (`input: {video, audio}`). `POST /v1/predictions/{id}/cancel` cancels. Bearer auth; errors
 * `{title, detail, status}` (problem+json).
 */
export function startReplicateDouble(opts: ReplicateDoubleOptions = {}): Promise<ReplicateDouble> {
  const keys = opts.keys && new Set(opts.keys);
  /** Per prediction: the polls that counted, and the output file's extension. */
  const predictions = new Map<string, { polls: number; ext: 'wav' | 'mp4' }>();
  let held = false;
  const state: ReplicateDoubleState = {
    canceled: new Set<string>(),
    pollsToSucceed: 2,
    hold() {
      held = true;
      return () => void (held = false);
    },
  };
  const { canceled } = state;
  return startHttpDouble({
    name: 'replicate',
    errorBody: (status, message) => ({
      body: JSON.stringify({ title: status === 401 ? 'Unauthenticated' : 'Error', detail: message, status }),
      contentType: 'application/problem+json',
    }),
    authorize: (req, d) => {
      const auth = String(req.headers.authorization ?? '');
      return keys ? auth.startsWith('Bearer ') && keys.has(auth.slice(7)) : auth === `Bearer ${d.key}`;
    },
    public: (req) => req.path.startsWith('/files/'),
    route(req, res, d) {
      const prediction = (id: string, status: string) => ({
        id,
        model: 'double/model',
        status,
        input: {},
        output: status === 'succeeded' ? `${d.url}/files/${id}.${predictions.get(id)!.ext}` : null,
        error: null,
        urls: { get: `${d.url}/v1/predictions/${id}`, cancel: `${d.url}/v1/predictions/${id}/cancel` },
      });
      if (
        req.method === 'POST' &&
        (/^\/v1\/models\/[^/]+\/[^/]+\/predictions$/.test(req.path) || req.path === '/v1/predictions')
      ) {
        const body = d.json(req) as { input?: { text?: unknown; video?: unknown; audio?: unknown }; version?: unknown };
        const video = typeof body.input?.video === 'string' && typeof body.input.audio === 'string';
        if (video) expectShape(opts.mp4, 'a video model (input.video, input.audio), but the double has no mp4');
        else expectShape(typeof body.input?.text === 'string' && body.input.text, 'input.text');
        if (req.path === '/v1/predictions') expectShape(typeof body.version === 'string', 'version');
        const id = randomBytes(8).toString('hex');
        predictions.set(id, { polls: 0, ext: video ? 'mp4' : 'wav' });
        d.sendJson(res, 201, prediction(id, 'starting'));
        return true;
      }
      const get = /^\/v1\/predictions\/([0-9a-f]+)$/.exec(req.path);
      if (req.method === 'GET' && get && predictions.has(get[1]!)) {
        const id = get[1]!;
        const p = predictions.get(id)!;
        if (!held) p.polls++;
        const { pollsToSucceed } = d as ReplicateDouble;
        const status = canceled.has(id) ? 'canceled' : held || p.polls < pollsToSucceed ? 'processing' : 'succeeded';
        d.sendJson(res, 200, prediction(id, status));
        return true;
      }
      const cancel = /^\/v1\/predictions\/([0-9a-f]+)\/cancel$/.exec(req.path);
      if (req.method === 'POST' && cancel) {
        canceled.add(cancel[1]!);
        d.sendJson(res, 200, prediction(cancel[1]!, 'canceled'));
        return true;
      }
      const file = /^\/files\/([0-9a-f]+)\.(wav|mp4)$/.exec(req.path);
      if (req.method === 'GET' && file && predictions.get(file[1]!)?.ext === file[2]) {
        if (file[2] === 'mp4') res.writeHead(200, { 'content-type': 'video/mp4' }).end(opts.mp4);
        else res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav(tone(22050, 0.3), 22050));
        return true;
      }
      return false;
    },
  }).then((d) => Object.assign(d, state));
}
