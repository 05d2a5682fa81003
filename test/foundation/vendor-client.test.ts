import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { retryAfterMs, vendorAudio, vendorFetch, vendorJson } from '../../shared/engines/core/vendor-client.ts';
import { isEngineError, type EngineError } from '../../shared/kernel/errors/engine-error.ts';

/**
 * The engine adapters' one HTTP client against a real local server (port 0): each test queues what the server
 * answers to its next requests and reads what it received. No mocks: real sockets, real fetch.
 */
type Answer = (req: IncomingMessage, res: ServerResponse, body: string) => void;

let server: Server;
let base: string;
let answers: Answer[];
let received: { method: string; body: string }[];

const reply =
  (status: number, body: string, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };
/** Accepts the request and never answers: a vendor that hangs. */
const hang: Answer = () => {};

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      received.push({ method: req.method ?? '', body });
      const answer = answers.shift() ?? reply(500, '{"error":"no answer queued"}');
      answer(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  answers = [];
  received = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function failure(p: Promise<unknown>): Promise<EngineError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!isEngineError(e)) throw new Error(`expected an EngineError, got ${String(e)}`);
  return e;
}

describe('vendor client: retries where they are safe', () => {
  it('a GET that meets a 503 is sent again and succeeds', async () => {
    answers.push(reply(503, '{"error":"busy"}'), reply(200, '{"ok":true}'));
    await expect(vendorJson('acme', `${base}/status`)).resolves.toEqual({ ok: true });
    expect(received.map((r) => r.method)).toEqual(['GET', 'GET']);
  });

  it('a POST that creates something is not sent twice after a 502, and the error says what the vendor said', async () => {
    answers.push(reply(502, '{"error":"gateway exploded"}'), reply(200, '{"id":"job_2"}'));
    const e = await failure(vendorJson('acme', `${base}/jobs`, { json: { prompt: 'a cat' } }));
    expect(e).toMatchObject({ provider: 'acme', kind: 'upstream', status: 502, retryable: true });
    expect(e.message).toContain('gateway exploded');
    expect(received).toHaveLength(1);
  });

  it('an idempotent POST is retried on 5xx up to its attempts, with the same body each time', async () => {
    answers.push(reply(500, 'a'), reply(500, 'b'), reply(500, 'c'), reply(200, '{}'));
    const e = await failure(vendorJson('acme', `${base}/embed`, { json: { input: ['x'] }, idempotent: true }));
    expect(e).toMatchObject({ kind: 'upstream', status: 500, retryable: true });
    expect(received.map((r) => r.body)).toEqual(Array(3).fill('{"input":["x"]}'));
  });

  it('a 429 is retried whatever the method (the vendor did not take the request), after its Retry-After', async () => {
    answers.push(reply(429, '{"error":"slow down"}', { 'retry-after': '0' }), reply(201, '{"id":"job_1"}'));
    await expect(vendorJson('acme', `${base}/jobs`, { json: { prompt: 'a dog' } })).resolves.toEqual({ id: 'job_1' });
    expect(received.map((r) => r.body)).toEqual(['{"prompt":"a dog"}', '{"prompt":"a dog"}']);
  });

  it('a Retry-After longer than the client waits is handed back at once as a retryable rate limit', async () => {
    answers.push(reply(429, '{"error":"come back in an hour"}', { 'retry-after': '3600' }), reply(200, '{}'));
    const e = await failure(vendorJson('acme', `${base}/status`));
    expect(e).toMatchObject({ kind: 'rate_limited', status: 429, retryable: true });
    expect(received).toHaveLength(1);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });

  it('a refused key and a rejected request are permanent and sent once', async () => {
    answers.push(reply(401, '{"error":"bad key"}'), reply(200, '{}'));
    expect(await failure(vendorJson('acme', `${base}/status`))).toMatchObject({ kind: 'auth', retryable: false });
    answers.splice(0);
    answers.push(reply(422, '{"error":"prompt too long"}'), reply(200, '{}'));
    const e = await failure(vendorJson('acme', `${base}/status`));
    expect(e).toMatchObject({ kind: 'bad_request', status: 422, retryable: false });
    expect(e.message).toContain('prompt too long');
    expect(received).toHaveLength(2);
  });
});

describe('vendor client: deadlines and aborts', () => {
  it('a vendor that never answers is a retryable timeout after the header deadline; a GET tries again', async () => {
    answers.push(hang, reply(200, '{"late":false}'));
    await expect(vendorJson('acme', `${base}/status`, { headersTimeoutMs: 150 })).resolves.toEqual({ late: false });
    expect(received).toHaveLength(2);
    answers.splice(0);
    answers.push(hang, reply(200, '{}'));
    const e = await failure(vendorFetch('acme', `${base}/jobs`, { method: 'POST', headersTimeoutMs: 150 }));
    expect(e).toMatchObject({ provider: 'acme', kind: 'timeout', retryable: true });
    expect(received).toHaveLength(3);
  });

  it("the caller's abort stays an abort: not a timeout, never retried", async () => {
    answers.push(hang, reply(200, '{}'));
    const ac = new AbortController();
    const p = vendorFetch('acme', `${base}/status`, { signal: ac.signal, headersTimeoutMs: 60_000 });
    while (received.length === 0) await new Promise((r) => setImmediate(r));
    ac.abort();
    expect(await failure(p)).toMatchObject({ kind: 'aborted', retryable: false });
    expect(received).toHaveLength(1);
  });

  it('an unreachable vendor is a retryable network failure', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/x`;
    await new Promise((r) => closed.close(r));
    expect(await failure(vendorFetch('acme', url, { attempts: 2 }))).toMatchObject({
      kind: 'unavailable',
      retryable: true,
    });
  });
});

describe('vendor client: bodies', () => {
  it('streams a response as it arrives instead of buffering it', async () => {
    let finish!: () => void;
    answers.push((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/pcm' });
      res.write('first');
      finish = () => res.end('second');
    });
    const res = await vendorAudio('acme', `${base}/speak`, { json: { text: 'hi' }, idempotent: true });
    const reader = res.body!.getReader();
    const first = await reader.read();
    // The server has not ended the response yet: the first chunk can only have come from a stream.
    expect(Buffer.from(first.value!).toString()).toBe('first');
    finish();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    expect(rest).toBe('second');
  });

  it('a 2xx that is not JSON, or JSON where audio was asked for, is an upstream failure', async () => {
    answers.push((_req, res) => res.end('<html>proxy error</html>'));
    expect(await failure(vendorJson('acme', `${base}/status`))).toMatchObject({ kind: 'upstream', retryable: true });
    answers.push(reply(200, '{"error":"quota"}'));
    const e = await failure(vendorAudio('acme', `${base}/speak`, { json: { text: 'hi' } }));
    expect(e).toMatchObject({ kind: 'upstream' });
    expect(e.message).toContain('quota');
  });
});
