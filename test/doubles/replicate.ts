import { randomBytes } from 'node:crypto';
import { tone, wav } from './audio.ts';
import { expectShape, startHttpDouble, type HttpDouble } from './http-double.ts';

export interface ReplicateDoubleState {
  /** Ids of predictions the client cancelled. */
  canceled: Set<string>;
  /** How many GETs a prediction stays `processing` before it succeeds. */
  pollsToSucceed: number;
}

/**
 * Replicate predictions: `POST /v1/models/{owner}/{name}/predictions` or `POST /v1/predictions` ({version})
 * → a prediction that is `starting`, then `processing`, then `succeeded` on successive `GET /v1/predictions/{id}`,
 * with `output` a file URL served without auth. `POST /v1/predictions/{id}/cancel` cancels. Bearer auth; errors
 * `{title, detail, status}` (problem+json).
 */
export function startReplicateDouble(): Promise<HttpDouble & ReplicateDoubleState> {
  const polls = new Map<string, number>();
  const state: ReplicateDoubleState = { canceled: new Set<string>(), pollsToSucceed: 2 };
  const { canceled } = state;
  return startHttpDouble({
    name: 'replicate',
    errorBody: (status, message) => ({
      body: JSON.stringify({ title: status === 401 ? 'Unauthenticated' : 'Error', detail: message, status }),
      contentType: 'application/problem+json',
    }),
    authorize: (req, d) => req.headers.authorization === `Bearer ${d.key}`,
    public: (req) => req.path.startsWith('/files/'),
    route(req, res, d) {
      const prediction = (id: string, status: string) => ({
        id,
        model: 'double/model',
        status,
        input: {},
        output: status === 'succeeded' ? `${d.url}/files/${id}.wav` : null,
        error: null,
        urls: { get: `${d.url}/v1/predictions/${id}`, cancel: `${d.url}/v1/predictions/${id}/cancel` },
      });
      if (
        req.method === 'POST' &&
        (/^\/v1\/models\/[^/]+\/[^/]+\/predictions$/.test(req.path) || req.path === '/v1/predictions')
      ) {
        const body = d.json(req) as { input?: { text?: unknown }; version?: unknown };
        expectShape(typeof body.input?.text === 'string' && body.input.text, 'input.text');
        if (req.path === '/v1/predictions') expectShape(typeof body.version === 'string', 'version');
        const id = randomBytes(8).toString('hex');
        polls.set(id, 0);
        d.sendJson(res, 201, prediction(id, 'starting'));
        return true;
      }
      const get = /^\/v1\/predictions\/([0-9a-f]+)$/.exec(req.path);
      if (req.method === 'GET' && get && polls.has(get[1]!)) {
        const id = get[1]!;
        const n = polls.get(id)! + 1;
        polls.set(id, n);
        d.sendJson(
          res,
          200,
          prediction(
            id,
            canceled.has(id)
              ? 'canceled'
              : n < (d as HttpDouble & ReplicateDoubleState).pollsToSucceed
                ? 'processing'
                : 'succeeded',
          ),
        );
        return true;
      }
      const cancel = /^\/v1\/predictions\/([0-9a-f]+)\/cancel$/.exec(req.path);
      if (req.method === 'POST' && cancel) {
        canceled.add(cancel[1]!);
        d.sendJson(res, 200, prediction(cancel[1]!, 'canceled'));
        return true;
      }
      if (req.method === 'GET' && /^\/files\/[0-9a-f]+\.wav$/.test(req.path)) {
        res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav(tone(22050, 0.3), 22050));
        return true;
      }
      return false;
    },
  }).then((d) => Object.assign(d, state));
}
