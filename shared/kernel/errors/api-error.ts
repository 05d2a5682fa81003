import { ERROR_CODES, type ErrorCode } from './codes.ts';

/** What an id may look like to be repeated in a message: ours are `prefix_base62`; provider names, `agt_x@3`. */
const ECHOABLE_ID = /^[A-Za-z0-9_.:@+-]{1,64}$/;

/** `id "agt_x"` for a well-formed id; `that id` for any other text, which is never echoed back (issue #35). */
export function idRef(id: unknown): string {
  const s = String(id ?? '');
  return ECHOABLE_ID.test(s) ? `id "${s}"` : 'that id';
}

export type ErrorParams = Record<string, string | number | boolean | null | undefined>;

/**
 * An error that becomes the API's one envelope: `{error: {type, code, message, param, requestId}}`.
 * Recognised by `name` too, since errors cross process boundaries (queue jobs) as plain objects.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly type: string;
  readonly headers: Record<string, string>;
  /**
   * Whether a job that failed with this error should run again. False by default: an ApiError is a refusal of
   * the request itself (bad input, no credits). Set only where the error stands for a retryable upstream failure
   * (an EngineError mapped for the envelope keeps the engine's answer).
   */
  retryable = false;

  constructor(
    readonly code: ErrorCode,
    readonly params: ErrorParams = {},
    readonly param: string | null = null,
    headers: Record<string, string> = {},
  ) {
    const def = ERROR_CODES[code];
    super(
      def.message.replace(/\{(\w+)\}/g, (_, k: string) => (k === 'idRef' ? idRef(params.id) : String(params[k] ?? ''))),
    );
    this.status = def.status;
    this.type = def.type;
    this.headers = headers;
  }

  static notFound(resource: string, id: string): ApiError {
    return new ApiError('not_found', { resource, id }, 'id');
  }

  static validation(detail: string, param: string | null = null): ApiError {
    return new ApiError('validation_failed', { detail }, param);
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError || (e instanceof Error && e.name === 'ApiError' && 'code' in e);
}
