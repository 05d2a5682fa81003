import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, isApiError } from '../../kernel/errors/api-error.ts';
import { engineToApiError, isEngineError } from '../../kernel/errors/engine-error.ts';
import { isTransientDependencyError } from '../../kernel/errors/retry.ts';
import { isStorageFull } from '../../kernel/errors/storage-full.ts';
import { formatBytes } from '../../kernel/net/safe-fetch.ts';
import { isUnsafeObjectKeyError } from '../../kernel/storage/keys.ts';

/** Fastify's default limit on one path parameter (an id); longer ones are 414 before any route runs. */
const MAX_PARAM_LENGTH = 100;

export interface ErrorEnvelope {
  error: { type: string; code: string; message: string; param: string | null; requestId: string };
}

export function sendApiError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  const body: ErrorEnvelope = {
    error: { type: err.type, code: err.code, message: err.message, param: err.param, requestId: reply.request.id },
  };
  return reply.code(err.status).type('application/json; charset=utf-8').send(body);
}

/** Turns anything thrown into the one envelope. Bad input is a 4xx with a message that says what to fix. */
export function toApiError(err: FastifyError & { validation?: unknown[]; validationContext?: string }): ApiError {
  if (isApiError(err)) return err;
  if (isEngineError(err)) return engineToApiError(err, err.provider) as ApiError;
  if (Array.isArray(err.validation) && err.validation.length > 0) {
    const first = err.validation[0] as { instancePath?: string; message?: string; params?: Record<string, unknown> };
    const path = (first.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
    const where = err.validationContext === 'body' ? '' : `${err.validationContext ?? ''} `;
    const param = path || (first.params?.missingProperty as string | undefined) || null;
    // No body at all (an empty one counts as none, see input-guard.ts) on a route that needs one.
    if (err.validationContext === 'body' && !param && /received (null|undefined)$/.test(first.message ?? '')) {
      return ApiError.validation('The request body is missing: this route needs a JSON object.', null);
    }
    const detail = `${where}${param ? `${param}: ` : ''}${first.message ?? 'is invalid'}`;
    return ApiError.validation(detail.trim(), param);
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', { detail: err.message });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', { what: 'request body', limit: 'the route limit' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', {
        detail: 'Unsupported Content-Type. Send application/json (or multipart/form-data where a file is uploaded).',
      });
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new ApiError('payload_too_large', { what: 'upload', limit: formatBytes(25 * 1024 * 1024) });
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new ApiError('unsupported_media_type', { detail: 'Expected a multipart/form-data body.' });
    case 'FST_ERR_BAD_URL':
      return new ApiError('bad_request', { detail: 'The URL path is not valid (malformed percent-encoding).' });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('uri_too_long', { what: 'path parameter', limit: `${MAX_PARAM_LENGTH} characters` });
  }
  if (err instanceof SyntaxError) return new ApiError('invalid_json', { detail: jsonErrorDetail(err.message) });
  if (isStorageFull(err)) return new ApiError('storage_full');
  // The storage layer refused a key (a path, not a name); the reason is ours and quotes none of the key.
  if (isUnsafeObjectKeyError(err))
    return new ApiError('bad_request', {
      detail: `The object key ${err.reason}; keys are plain names separated by "/".`,
    });
  if (isTransientDependencyError(err))
    return new ApiError('dependency_unavailable', { dependency: 'A backing service' });
  const status = err.statusCode ?? 500;
  // Other framework 4xx become 400s; the message is cut short, since Fastify's may quote the input.
  if (status >= 400 && status < 500) return ApiError.validation(err.message.slice(0, 200));
  return new ApiError('internal_error');
}

/** A request path repeated in a message only when it is a plain one (issue #35: errors do not echo input). */
function echoablePath(url: string): string {
  const path = url.split('?')[0] ?? '';
  return /^\/[A-Za-z0-9/_.:@-]{0,200}$/.test(path) ? path : 'to that path';
}

/**
 * JSON.parse's message quotes the body (`Unexpected token 'x', "xyz…" is not valid JSON`): keep what went wrong and
 * where (the one offending character, the position), never the quoted text.
 */
export function jsonErrorDetail(message: string): string {
  return message.replace(/,?\s*".*"(\.\.\.)?\s*is not valid JSON\s*$/s, '').slice(0, 200);
}

async function errorHandler(app: FastifyInstance): Promise<void> {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) req.log.error({ err, requestId: req.id, route: req.routeOptions.url }, 'request failed');
    else req.log.debug({ code: apiErr.code, requestId: req.id }, 'request rejected');
    return sendApiError(reply, apiErr);
  });
  app.setNotFoundHandler((req, reply) =>
    sendApiError(reply, new ApiError('route_not_found', { method: req.method, path: echoablePath(req.url) })),
  );
}

export const errorHandlerPlugin = fp(errorHandler, { name: 'error-handler' });
