/**
 * Errors that carry their retry policy. Vendor 4xx is permanent except 408/429; network failures and 5xx are
 * retryable. Recognised by `name` as well as `instanceof` because they cross process boundaries.
 */
export class RetryableError extends Error {
  override name = 'RetryableError';
  readonly retryable = true;
}

export class PermanentError extends Error {
  override name = 'PermanentError';
  readonly retryable = false;
}

export function isRetryable(e: unknown): boolean {
  if (e && typeof e === 'object' && 'retryable' in e) return Boolean((e as { retryable: unknown }).retryable);
  if (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError')) return false;
  return true;
}

export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
