import { engineToApiError } from '../../kernel/errors/engine-error.ts';
import { isEngineError } from '../../kernel/errors/engine-error.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';

/**
 * An embedder or recogniser failure as an API error: the local engine missing its compiled model is a 503 the
 * operator fixes (run the set-up step); vendor failures map like every other engine call (key rejected → 400,
 * timeout → 504, anything else → 502).
 */
export function ragEngineError(e: unknown, provider: string): unknown {
  if (isEngineError(e) && provider === 'default' && e.kind === 'unavailable') {
    return new ApiError('feature_not_configured', { detail: e.message });
  }
  return engineToApiError(e, provider);
}
