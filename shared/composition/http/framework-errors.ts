import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { formatBytes } from '../../kernel/net/safe-fetch.ts';
import { sendApiError, toApiError } from './errors.ts';
import { newRequestId } from './request-id.ts';

/** Fastify's `frameworkErrors`: router errors (bad percent-encoding, over-long path parameter) in the envelope. */
export function sendFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', req.id);
  void sendApiError(reply, toApiError(err));
}

/** A request line this long is a URL problem (414), not a headers problem (431). */
function urlTooLong(raw: Buffer | undefined, maxHeaderBytes: number): boolean {
  if (!raw) return false;
  const end = raw.indexOf('\r\n');
  const line = end === -1 ? raw.length : end;
  return /^[A-Z]+ /.test(raw.subarray(0, 16).toString('latin1')) && line > maxHeaderBytes / 2;
}

function clientErrorToApi(code: string | undefined, raw: Buffer | undefined, maxHeaderBytes: number): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return urlTooLong(raw, maxHeaderBytes)
        ? new ApiError('uri_too_long', { what: 'URL', limit: formatBytes(maxHeaderBytes) })
        : new ApiError('headers_too_large', { limit: formatBytes(maxHeaderBytes) });
    case 'HPE_URI_TOO_LONG':
      return new ApiError('uri_too_long', { what: 'URL', limit: formatBytes(maxHeaderBytes) });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('request_timeout');
    default:
      return new ApiError('bad_request', { detail: 'The request is not valid HTTP/1.1.' });
  }
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser rejected the request before Fastify saw it (headers over
 * the limit, a URL over it, malformed HTTP). Answered on the raw socket in the one envelope; nothing of the
 * request is echoed back. The connection is closed, since the parser state is unusable after such an error.
 */
export function writeClientError(
  err: Error & { code?: string; rawPacket?: unknown },
  socket: Duplex,
  maxHeaderBytes: number,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy(err);
    return;
  }
  const raw = Buffer.isBuffer(err.rawPacket) ? err.rawPacket : undefined;
  const e = clientErrorToApi(err.code, raw, maxHeaderBytes);
  const requestId = newRequestId();
  const body = JSON.stringify({ error: { type: e.type, code: e.code, message: e.message, param: e.param, requestId } });
  socket.end(
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
