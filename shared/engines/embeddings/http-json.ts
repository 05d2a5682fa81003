import { EngineError } from '../../kernel/errors/engine-error.ts';

/** POSTs JSON to a vendor and parses the JSON answer; non-2xx becomes an EngineError with its retry policy. */
export async function postJson<T>(
  provider: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<T> {
  const timeout = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (e) {
    throw EngineError.network(provider, e);
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) throw EngineError.fromStatus(provider, res.status, text);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new EngineError(provider, 'upstream', `${provider} answered with a body that is not JSON`, true);
  }
}

export function requireKey(provider: string, apiKey: string | undefined): string {
  if (!apiKey) throw new EngineError(provider, 'auth', `${provider} needs an API key`, false);
  return apiKey;
}

export function trimSlash(u: string): string {
  return u.replace(/\/+$/, '');
}
