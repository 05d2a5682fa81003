import { createParser, type EventSourceMessage } from 'eventsource-parser';

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
