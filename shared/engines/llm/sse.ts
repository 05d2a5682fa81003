import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { responseBytes, vendorFetch } from '../core/vendor-client.ts';

/** One Server-Sent Event: `event` is absent when the server sent only `data:` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** A vendor event larger than this is a broken stream, not a reply (the parser would buffer it whole). */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Parses a `text/event-stream` body from a fetch body with `eventsource-parser` (WHATWG rules: `field: value`
 * lines, a blank line ends an event, several `data:` lines join with `\n`, `:` lines are comments). Unlike a
 * browser, an event cut off by the end of the stream (no final blank line) is still delivered: some proxies close
 * right after the last `data:` line, and dropping the vendor's final chunk would lose the reply's end.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const ready: SseEvent[] = [];
  let failure: Error | undefined;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_CHARS,
    onEvent: (ev: EventSourceMessage) => ready.push({ event: ev.event, data: ev.data }),
    onError: (err) => (failure = err),
  });
  const drain = function* (): Generator<SseEvent> {
    if (failure) throw failure;
    while (ready.length) yield ready.shift()!;
  };
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* drain();
  }
  parser.feed(`${decoder.decode()}\n\n`);
  yield* drain();
}

/**
 * POSTs a JSON body to a vendor's streaming endpoint with the vendor client and yields its Server-Sent Events as
 * they arrive. A completion only computes an answer, so a failure before the stream starts may be retried.
 */
export async function* postForEvents(
  provider: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent> {
  const res = await vendorFetch(provider, url, {
    method: 'POST',
    idempotent: true,
    headers: { accept: 'text/event-stream', ...headers },
    json: body,
    signal,
  });
  yield* parseSse(responseBytes(provider, res));
}

/** An event's JSON payload; one that is not JSON is a broken (retryable) upstream stream. */
export function parseJson<T>(provider: string, data: string): T {
  try {
    return JSON.parse(data) as T;
  } catch {
    throw new EngineError(provider, 'upstream', `${provider} sent an event that is not JSON`, true);
  }
}
