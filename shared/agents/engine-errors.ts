import { isEngineError } from '../engines/core/engine-error.ts';
import { ApiError } from '../errors/api-error.ts';

/**
 * An upstream LLM/TTS failure as an API error: a rejected key is the caller's to fix (400), a timeout is 504,
 * anything else from the vendor is 502. Non-engine errors pass through unchanged.
 */
export function engineToApiError(e: unknown, provider: string): unknown {
  if (!isEngineError(e)) return e;
  switch (e.kind) {
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
