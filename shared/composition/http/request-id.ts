import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// Request ids: a random per-process part plus a counter. Unique across processes, and no syscall per request.
const REQUEST_ID_BASE = `req_${randomBytes(6).toString('base64url')}`;
let requestCounter = 0;

/** A fresh request id (also for answers written before Fastify has a request: 431, 414, 408). */
export function newRequestId(): string {
  return `${REQUEST_ID_BASE}${(requestCounter++).toString(36)}`;
}

/** The caller's X-Request-Id when it is a sane token, else a fresh id. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : newRequestId();
}
