import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
} from '../../shared/kernel/db/idempotency.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';

const REPLAYED_HEADERS = ['content-type', 'location', 'x-provider-used', 'x-usage-bypassed'];
/** Bodies above this are not stored for replay (audio streams); the key still guards against a double run. */
const MAX_STORED_BODY = 1024 * 1024;
/** Marker in the stored headers: the first response was streamed or too large to keep. */
const NOT_REPLAYABLE = 'x-vap-not-replayable';
/** Marker in the stored headers: the response held a secret, not stored; the value is the created id. */
const SECRET_WITHHELD = 'x-vap-secret-withheld';

/** The stored form of a response with secrets: the body without them, and the id of what it created. */
function withoutSecrets(body: Buffer, fields: string[]): { body: Buffer; id: string } {
  const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  for (const path of fields) {
    const keys = path.split('.');
    let at: unknown = json;
    for (const k of keys.slice(0, -1)) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[k] : null;
    if (at && typeof at === 'object') delete (at as Record<string, unknown>)[keys.at(-1)!];
  }
  const id = typeof json.id === 'string' ? json.id : '';
  return { body: Buffer.from(JSON.stringify(json)), id };
}

/** What to do instead of a replay when a created secret cannot be shown again. */
function recoveryHint(url: string, id: string): string {
  const path = url.split('?')[0]!.replace(/\/+$/, '');
  return `if the first response was lost, rotate it with POST ${path}/${id}/rotate.`;
}

function toArray<T>(v: T | T[] | undefined): T[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/**
 * `Idempotency-Key` for routes with `config: { idempotent: true }`: the first response is stored and replayed
 * for 24 h; the same key with a different body is 409; a retry while the first is running is 409 as well.
 * 5xx responses release the key so that a retry can run the request again. A secret shown once (a new API key,
 * an agent's tool-signing secret) is never stored: see `idempotentSecrets` (api/types.ts).
 */
async function idempotency(app: FastifyInstance): Promise<void> {
  const { db } = app.infra;
  app.decorateRequest('idempotency', null);

  // Only routes that opt in carry the hooks, so every other request skips them entirely.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.preHandler = [...toArray(route.preHandler), claim];
    route.onSend = [...toArray(route.onSend), store];
  });

  async function claim(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || key === '') return;
    if (key.length > 255)
      throw ApiError.validation('Idempotency-Key must be at most 255 characters', 'Idempotency-Key');
    const bodyPart = req.isMultipart()
      ? `multipart:${req.headers['content-length'] ?? ''}`
      : JSON.stringify(req.body ?? null);
    const hash = createHash('sha256').update(`${req.method} ${req.url}\n${bodyPart}`).digest('hex');
    const developerId = req.auth.developerId;
    const existing = await claimIdempotencyKey(db, { developerId, key, method: req.method, path: req.url, hash });
    if (!existing) {
      req.idempotency = { key, developerId };
      return;
    }
    if (existing.request_hash !== hash) throw new ApiError('idempotency_key_reused', {}, 'Idempotency-Key');
    if (existing.state !== 'done' || existing.response_status === null) {
      throw new ApiError('idempotency_in_progress', {}, 'Idempotency-Key');
    }
    if (existing.response_headers?.[NOT_REPLAYABLE]) {
      throw new ApiError('idempotency_response_unavailable', {}, 'Idempotency-Key');
    }
    const withheld = existing.response_headers?.[SECRET_WITHHELD];
    if (withheld !== undefined) {
      const resource = req.routeOptions.config.idempotentSecrets?.resource ?? 'a resource';
      throw new ApiError(
        'idempotency_secret_not_stored',
        { resource, id: withheld, hint: recoveryHint(req.url, withheld) },
        'Idempotency-Key',
      );
    }
    for (const [k, v] of Object.entries(existing.response_headers ?? {})) {
      if (k !== SECRET_WITHHELD) reply.header(k, v);
    }
    reply.header('idempotent-replayed', 'true');
    return reply.code(existing.response_status).send(existing.response_body ?? undefined);
  }

  async function store(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const idem = req.idempotency;
    if (!idem) return payload;
    req.idempotency = null;
    // A 5xx, or a 429 that says when to retry (a limit in flight, not an answer to the request), is not kept: the
    // retry it asks for, with the same key, runs the request.
    if (reply.statusCode >= 500 || reply.statusCode === 429) {
      await releaseIdempotencyKey(db, idem.developerId, idem.key);
      return payload;
    }
    let body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : null;
    const headers: Record<string, string> = {};
    const secrets = req.routeOptions.config.idempotentSecrets;
    if (secrets && body && reply.statusCode < 300) {
      const safe = withoutSecrets(body, secrets.fields);
      if (secrets.replay === 'conflict') {
        headers[SECRET_WITHHELD] = safe.id;
        body = null;
      } else body = safe.body;
    }
    for (const h of REPLAYED_HEADERS) {
      const v = reply.getHeader(h);
      if (v !== undefined) headers[h] = String(v);
    }
    const storable =
      headers[SECRET_WITHHELD] !== undefined ||
      payload === null ||
      payload === undefined ||
      (body !== null && body.length <= MAX_STORED_BODY);
    if (!storable) headers[NOT_REPLAYABLE] = 'true';
    await completeIdempotencyKey(db, idem.developerId, idem.key, reply.statusCode, headers, storable ? body : null);
    return payload;
  }
}

export const idempotencyPlugin = fp(idempotency, { name: 'idempotency', dependencies: ['auth'] });
