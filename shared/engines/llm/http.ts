import { EngineError } from '../../kernel/errors/engine-error.ts';
import { parseSse, type SseEvent } from './sse.ts';

/**
 * POSTs a JSON body to a vendor's streaming endpoint and yields its Server-Sent Events. Non-2xx answers become
 * an EngineError carrying the vendor's status (so 401/429/5xx keep their retry policy).
 */
export async function* postSse(
  provider: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
      body: JSON.stringify(body),
      signal,
    });
  } catch (e) {
    throw EngineError.network(provider, e);
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    throw EngineError.fromStatus(provider, res.status, text);
  }
  yield* parseSse(res.body as unknown as AsyncIterable<Uint8Array>);
}

export function parseJson<T>(provider: string, data: string): T {
  try {
    return JSON.parse(data) as T;
  } catch {
    throw new EngineError(provider, 'upstream', `${provider} sent an event that is not JSON`, true);
  }
}

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
