import { retryableStatus } from '../../errors/retry.ts';

export type EngineErrorKind =
  'auth' | 'rate_limited' | 'bad_request' | 'upstream' | 'timeout' | 'unavailable' | 'aborted';

/**
 * An engine call failed. Carries its retry policy: vendor 4xx is permanent except 408/429; network failures,
 * timeouts and 5xx are retryable. Recognised by `name` across process boundaries.
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
    return new EngineError(
      provider,
      kind,
      `${provider} answered HTTP ${status}: ${body.slice(0, 300)}`,
      retryableStatus(status),
      status,
    );
  }

  static network(provider: string, e: unknown): EngineError {
    const err = e as Error;
    if (err?.name === 'AbortError') return new EngineError(provider, 'aborted', 'aborted', false);
    if (err?.name === 'TimeoutError') return new EngineError(provider, 'timeout', `${provider} timed out`, true);
    return new EngineError(provider, 'unavailable', `${provider} unreachable: ${err?.message ?? String(e)}`, true);
  }
}

export function isEngineError(e: unknown): e is EngineError {
  return e instanceof EngineError || (e instanceof Error && e.name === 'EngineError');
}
