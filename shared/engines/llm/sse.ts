/** One Server-Sent Event: `event` is absent when the server sent only `data:` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * Parses a `text/event-stream` body (WHATWG rules: `field: value` lines, blank line ends an event, several
 * `data:` lines join with `\n`, lines starting with `:` are comments) from a fetch body.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buf = '';
  let event: string | undefined;
  let data: string[] = [];
  const flush = (): SseEvent | null => {
    const out = data.length ? { event, data: data.join('\n') } : null;
    event = undefined;
    data = [];
    return out;
  };
  const handle = (line: string): SseEvent | null => {
    if (line === '') return flush();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    return null;
  };
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.search(/\r\n|\r|\n/)) !== -1) {
      if (nl === buf.length - 1 && buf[nl] === '\r') break; // a \r\n split across chunks
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf[nl] === '\r' && buf[nl + 1] === '\n' ? 2 : 1));
      const ev = handle(line);
      if (ev) yield ev;
    }
  }
  buf += decoder.decode();
  if (buf) {
    const ev = handle(buf);
    if (ev) yield ev;
  }
  const last = flush();
  if (last) yield last;
}
