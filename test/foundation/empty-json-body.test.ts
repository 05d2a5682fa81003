import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue 34: many HTTP clients send `Content-Type: application/json` on every request, body or not. An empty body
 * is no body: routes whose body is optional take it, routes that need one say that the body is missing. Sent both
 * with `Content-Length: 0` and with no length at all (what `curl -X POST -H 'Content-Type: application/json'`
 * sends), over a raw socket so that no client fills the header in.
 */
let p: TestPlatform;
let key: string;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  key = (await p.developer()).apiKey;
});
afterAll(() => p?.close());

type Framing = 'content-length: 0' | 'no length';

/** One raw HTTP/1.1 request: the headers exactly as written (Node's client adds a length to a bodiless POST). */
function send(method: string, path: string, framing: Framing): Promise<{ status: number; body: string }> {
  const url = new URL(p.url + path);
  const lines = [
    `${method} ${url.pathname} HTTP/1.1`,
    `host: ${url.host}`,
    `authorization: Bearer ${key}`,
    'content-type: application/json',
    'connection: close',
    ...(framing === 'content-length: 0' ? ['content-length: 0'] : []),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (raw += c));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const chunked = /transfer-encoding: chunked/i.test(head);
      const payload = rest.join('\r\n\r\n');
      resolve({ status, body: chunked ? dechunk(payload) : payload });
    });
  });
}

function dechunk(s: string): string {
  let out = '';
  for (let at = 0; ;) {
    const eol = s.indexOf('\r\n', at);
    const size = parseInt(s.slice(at, eol), 16);
    if (!size) return out;
    out += s.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

async function newKeyId(): Promise<string> {
  const res = await p.request('/v1/keys', { method: 'POST', key, json: { name: 'spare' } });
  return ((await res.json()) as { id: string }).id;
}

async function newCollectionId(): Promise<string> {
  const res = await p.request('/v1/collections', { method: 'POST', key, json: { name: 'c' } });
  return ((await res.json()) as { id: string }).id;
}

describe.each<Framing>(['content-length: 0', 'no length'])('an empty JSON body (%s)', (framing) => {
  it('POST /v1/keys creates a "Default" key', async () => {
    const res = await send('POST', '/v1/keys', framing);
    expect(res.status).toBe(201);
    expect((JSON.parse(res.body) as { name: string }).name).toBe('Default');
  });

  it('POST /v1/keys/:id/rotate rotates', async () => {
    const res = await send('POST', `/v1/keys/${await newKeyId()}/rotate`, framing);
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as { key: string }).key).toMatch(/^vap_/);
  });

  it('DELETE /v1/keys/:id and DELETE /v1/collections/:id delete', async () => {
    expect((await send('DELETE', `/v1/keys/${await newKeyId()}`, framing)).status).toBe(204);
    expect((await send('DELETE', `/v1/collections/${await newCollectionId()}`, framing)).status).toBe(204);
  });

  it('a route that needs a body answers a 400 about the body, not invalid_json', async () => {
    const res = await send('POST', '/v1/agents', framing);
    expect(res.status).toBe(400);
    const err = (JSON.parse(res.body) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('validation_failed');
    expect(err.message).toMatch(/body/i);
  });
});
