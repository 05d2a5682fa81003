import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../../shared/db/idempotency.ts';
import { ApiError } from '../../shared/errors/api-error.ts';

const REPLAYED_HEADERS = ['content-type', 'location', 'x-provider-used', 'x-usage-bypassed'];
/** Bodies above this are not stored for replay (audio streams); the key still guards against a double run. */
const MAX_STORED_BODY = 1024 * 1024;
/** Marker in the stored headers: the first response was streamed or too large to keep. */
const NOT_REPLAYABLE = 'x-vap-not-replayable';

function toArray<T>(v: T | T[] | undefined): T[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/**
 * `Idempotency-Key` for routes with `config: { idempotent: true }`: the first response is stored and replayed
 * for 24 h; the same key with a different body is 409; a retry while the first is running is 409 as well.
 * 5xx responses release the key so that a retry can run the request again.
 */
export const idempotencyPlugin = fp(async (app: FastifyInstance) => {
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
    for (const [k, v] of Object.entries(existing.response_headers ?? {})) reply.header(k, v);
    reply.header('idempotent-replayed', 'true');
    return reply.code(existing.response_status).send(existing.response_body ?? undefined);
  }

  async function store(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const idem = req.idempotency;
    if (!idem) return payload;
    req.idempotency = null;
    if (reply.statusCode >= 500) {
      await releaseIdempotencyKey(db, idem.developerId, idem.key);
      return payload;
    }
    const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : null;
    const headers: Record<string, string> = {};
    for (const h of REPLAYED_HEADERS) {
      const v = reply.getHeader(h);
      if (v !== undefined) headers[h] = String(v);
    }
    const storable = payload === null || payload === undefined || (body !== null && body.length <= MAX_STORED_BODY);
    if (!storable) headers[NOT_REPLAYABLE] = 'true';
    await completeIdempotencyKey(db, idem.developerId, idem.key, reply.statusCode, headers, storable ? body : null);
    return payload;
  }
});
