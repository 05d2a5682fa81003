/**
 * The one answer to "should this failure be tried again?", read from the error itself. Errors cross process
 * boundaries (BullMQ stores a failed job's error as a plain object), so everything here is recognised by `name`,
 * `code` and fields, never by `instanceof` alone.
 *
 *  - An error that says (`retryable: true|false`) is believed: RetryableError, PermanentError, EngineError,
 *    VideoFailure, ToolFailure.
 *  - An ApiError is the caller's request being refused (bad input, no credits, not found): permanent, unless it
 *    is the platform's own dependency being down.
 *  - A transient dependency failure (Postgres restarting, Redis gone, S3 5xx, a refused or reset connection, a
 *    timeout) is retryable and, for accepted jobs, retried without limit: see `isTransientDependencyError`.
 *  - An abort (the job's own time limit, a shutdown) is not retried by the handler: BullMQ's stalled check or the
 *    reconciler hands the job on.
 *  - Anything else (a bug) is retried within the job's attempts, then fails with a clear code.
 */
export class RetryableError extends Error {
  override name = 'RetryableError';
  readonly retryable = true;
}

export class PermanentError extends Error {
  override name = 'PermanentError';
  readonly retryable = false;
}

/** Node socket errors that mean "the other side is not there right now". */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

/**
 * Postgres SQLSTATEs of a server restarting or overloaded: connection exceptions (08xxx), admin/crash shutdown,
 * "the database system is starting up", too many connections, serialization failure and deadlock.
 */
function isTransientPgCode(code: string): boolean {
  return (
    code.startsWith('08') || ['57P01', '57P02', '57P03', '53300', '53400', '40001', '40P01', '55P03'].includes(code)
  );
}

/** Messages of pg, ioredis and BullMQ when their connection is gone (they carry no code). */
const TRANSIENT_MESSAGE =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Stream isn't writeable|MaxRetriesPerRequest|Connection is closed|Cannot connect to the database|socket hang up|Client network socket disconnected|the database system is (starting up|shutting down)/i;

/**
 * True when the failure is one of the platform's own dependencies (Postgres, Redis, S3, the network) being
 * briefly unavailable, not the job's input or an engine's answer. Accepted work waits this out: it is never a
 * reason to fail a job. Engine and API errors are never transient dependencies (an engine's own network failure
 * is an EngineError with its own retry policy).
 */
export function isTransientDependencyError(e: unknown, depth = 0): boolean {
  if (!e || typeof e !== 'object' || depth > 4) return false;
  const err = e as {
    name?: string;
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
    $metadata?: { httpStatusCode?: number };
  };
  const code = typeof err.code === 'string' ? err.code : '';
  // The API's own "a backing service is down" answer, raised where a dependency call failed.
  if (err.name === 'ApiError') return code === 'dependency_unavailable';
  if (err.name === 'EngineError' || err.name === 'VideoFailure' || err.name === 'ToolFailure') return false;
  if (NETWORK_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && isTransientPgCode(code))) return true;
  if (typeof err.message === 'string' && TRANSIENT_MESSAGE.test(err.message)) return true;
  // S3 (AWS SDK v3): a 5xx or a throttle from the object store.
  const s3Status = err.$metadata?.httpStatusCode;
  if (typeof s3Status === 'number' && retryableStatus(s3Status)) return true;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  // fetch() wraps the socket error in `cause`; dual-stack connects throw an AggregateError of both attempts.
  if (err.cause && isTransientDependencyError(err.cause, depth + 1)) return true;
  if (Array.isArray(err.errors) && err.errors.some((x) => isTransientDependencyError(x, depth + 1))) return true;
  return false;
}

export function isRetryable(e: unknown): boolean {
  if (isTransientDependencyError(e)) return true;
  if (e && typeof e === 'object' && 'retryable' in e && typeof (e as { retryable: unknown }).retryable === 'boolean')
    return (e as { retryable: boolean }).retryable;
  if (e instanceof Error && e.name === 'ApiError') return false;
  if (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError')) return false;
  return true;
}

/** Upstream HTTP statuses worth another try: request timeout, rate limiting, and server-side failures. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
