import { ApiError } from './api-error.ts';
import { retryableStatus } from './retry.ts';

export type EngineErrorKind =
  | 'auth'
  | 'rate_limited'
  | 'bad_request'
  | 'upstream'
  | 'timeout'
  | 'unavailable'
  | 'aborted'
  /** The caller's input is one this engine cannot serve (unknown voice, no face, unsupported language): permanent. */
  | 'invalid_input'
  /** No engine of that name is configured here: permanent until the operator configures it. */
  | 'not_configured';

/** Which kind of input an `invalid_input` refused, so each boundary can answer with its own code. */
export type InputProblem = 'invalid' | 'unsupported_language' | 'unreadable' | 'no_face' | 'too_costly';

/**
 * An engine or vendor adapter call failed. Engines throw this, never the HTTP ApiError: it carries its retry
 * policy and the upstream status (vendor 4xx is permanent except 408/429; network failures, timeouts and 5xx are
 * retryable), and the API layer maps it to the envelope (`engineToApiError`, also applied by the error handler).
 * Recognised by `name` across process boundaries.
 */
export class EngineError extends Error {
  override name = 'EngineError';
  constructor(
    readonly provider: string,
    readonly kind: EngineErrorKind,
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
  }

  /** With kind `invalid_input`: what was wrong with the input, and the request field it came from. */
  problem?: InputProblem;
  param?: string;
  /**
   * With a vendor's error status: the start of its answer (fromStatus), for a caller that reads the vendor's own
   * error format (Vapi's `message`); the `message` carries only its first 300 characters.
   */
  vendorBody?: string;
  /**
   * The share of the input (0-1) an engine had processed when it stopped for a reason the input caused (a local
   * synthesis past its CPU deadline): that work is charged, not refunded.
   */
  workDone?: number;

  /** The caller's input cannot be served by this engine; `message` is written for the caller. */
  static invalidInput(provider: string, problem: InputProblem, message: string, param?: string): EngineError {
    const e = new EngineError(provider, 'invalid_input', message, false);
    e.problem = problem;
    e.param = param;
    return e;
  }

  /** No engine named `provider` is configured here; `message` says which are. */
  static notConfigured(provider: string, message: string): EngineError {
    return new EngineError(provider, 'not_configured', message, false);
  }

  static fromStatus(provider: string, status: number, body: string): EngineError {
    const kind: EngineErrorKind =
      status === 401 || status === 403
        ? 'auth'
        : status === 429
          ? 'rate_limited'
          : status === 408
            ? 'timeout'
            : status >= 500
              ? 'upstream'
              : 'bad_request';
    const e = new EngineError(
      provider,
      kind,
      `${provider} answered HTTP ${status}: ${body.slice(0, 300)}`,
      retryableStatus(status),
      status,
    );
    e.vendorBody = body.slice(0, 2000);
    return e;
  }

  static network(provider: string, e: unknown): EngineError {
    const err = e as Error;
    // An abortable wait (timers/promises) rejects with AbortError and the signal's reason as its cause.
    const why = err?.name === 'AbortError' && err.cause instanceof Error ? err.cause : err;
    if (why?.name === 'TimeoutError') return new EngineError(provider, 'timeout', `${provider} timed out`, true);
    if (err?.name === 'AbortError') return new EngineError(provider, 'aborted', 'aborted', false);
    if (err?.name === 'TimeoutError') return new EngineError(provider, 'timeout', `${provider} timed out`, true);
    return new EngineError(provider, 'unavailable', `${provider} unreachable: ${err?.message ?? String(e)}`, true);
  }
}

export function isEngineError(e: unknown): e is EngineError {
  return e instanceof EngineError || (e instanceof Error && e.name === 'EngineError');
}

/**
 * An engine failure as an API error (keeping the engine's retry policy): input the engine refused is the caller's
 * to fix (400), as are an engine not configured here and a rejected key; a timeout is 504; anything else from the
 * vendor is 502. Non-engine errors pass through unchanged.
 */
export function engineToApiError(e: unknown, provider?: string): unknown {
  if (!isEngineError(e)) return e;
  const out = envelopeOf(e, provider ?? e.provider);
  out.retryable = e.retryable;
  return out;
}

function envelopeOf(e: EngineError, provider: string): ApiError {
  switch (e.kind) {
    case 'invalid_input':
      if (e.problem === 'unsupported_language')
        return new ApiError('unsupported_language', { detail: e.message }, e.param ?? null);
      if (e.problem === 'too_costly')
        return new ApiError('synthesis_too_costly', { detail: e.message }, e.param ?? null);
      return ApiError.validation(e.message, e.param ?? null);
    case 'not_configured':
      return new ApiError('provider_unavailable', { provider: e.provider, detail: e.message }, 'provider');
    case 'auth':
      return new ApiError(
        'provider_unavailable',
        { provider, detail: `the provider rejected the API key (HTTP ${e.status ?? 401})` },
        'provider',
      );
    case 'timeout':
      return new ApiError('upstream_timeout', { provider });
    case 'bad_request':
      return new ApiError('upstream_error', {
        provider,
        detail: `the provider refused the request (HTTP ${e.status})`,
      });
    case 'rate_limited':
      return new ApiError('upstream_error', { provider, detail: 'the provider is rate limiting this key (HTTP 429)' });
    default:
      return new ApiError('upstream_error', {
        provider,
        detail: e.status ? `HTTP ${e.status}` : e.kind === 'aborted' ? 'aborted' : 'unreachable, or the stream broke',
      });
  }
}
