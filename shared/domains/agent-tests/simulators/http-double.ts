import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server on port 0 that plays a vendor's wire format in tests. It records every request (method,
 * path, query, headers, body), answers auth failures and queued failures in the vendor's own error format, and
 * can hold a streamed answer after its first chunk so a test can prove the client streams.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface VendorError {
  body: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface HttpDoubleSpec {
  name: string;
  /** The vendor's error body for a status (e.g. `{"detail": {...}}`). */
  errorBody(status: number, message: string): VendorError;
  /** True when the request carries the expected credential in the vendor's scheme. */
  authorize(req: RecordedRequest, double: HttpDouble): boolean;
  /** Paths that need no credential (e.g. a file download by signed URL). */
  public?: (req: RecordedRequest) => boolean;
  /** Answers one request; returns false when no route matched (→ 404 in the vendor's format). */
  route(req: RecordedRequest, res: ServerResponse, double: HttpDouble): Promise<boolean> | boolean;
}

type Failure = { status: number; message: string; raw?: { body: string; contentType: string } };

export class HttpDouble {
  readonly requests: RecordedRequest[] = [];
  url = '';
  /** Streamed answers whose client went away before the end (cancelled synthesis, barge-in). */
  cancelledStreams = 0;
  /** The credential the double accepts; tests send something else to provoke 401. */
  key: string;
  private readonly failures: Failure[] = [];
  /** Answers every request with this failure until cleared (a vendor that stays down, seen through retries). */
  private lasting: Failure | null = null;
  private gate: Promise<void> | null = null;
  private readonly server = createServer((req, res) => void this.handle(req, res));

  constructor(
    readonly spec: HttpDoubleSpec,
    key: string,
  ) {
    this.key = key;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The most recent request (throws when none arrived). */
  last(): RecordedRequest {
    const r = this.requests.at(-1);
    if (!r) throw new Error(`${this.spec.name} double received no request`);
    return r;
  }

  json(req: RecordedRequest = this.last()): Record<string, unknown> {
    return JSON.parse(req.body.toString('utf8')) as Record<string, unknown>;
  }

  /** The next request is answered with this status and the vendor's error body. */
  failNext(status: number, message = `injected ${status}`): void {
    this.failures.push({ status, message });
  }

  /**
   * Every request is answered with this status and the vendor's error body until the returned function is called:
   * what a client that retries sees when the vendor stays down (a single `failNext` is absorbed by its retry).
   */
  failUntilCleared(status: number, message = `injected ${status}`): () => void {
    this.lasting = { status, message };
    return () => {
      this.lasting = null;
    };
  }

  /** The next request is answered verbatim (e.g. a 200 HTML page from a misbehaving proxy). */
  answerNext(status: number, body: string, contentType: string): void {
    this.failures.push({ status, message: '', raw: { body, contentType } });
  }

  /** Streamed answers stop after their first chunk until the returned function is called. */
  holdAfterFirstChunk(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((r) => (release = r));
    return () => {
      this.gate = null;
      release();
    };
  }

  /** Writes `chunks` one by one (each its own write, so each is its own HTTP chunk), honouring the hold. */
  async stream(res: ServerResponse, chunks: Buffer[], contentType: string, status = 200): Promise<void> {
    res.writeHead(status, { 'content-type': contentType, 'transfer-encoding': 'chunked' });
    res.on('close', () => {
      if (!res.writableFinished) this.cancelledStreams++;
    });
    for (let i = 0; i < chunks.length; i++) {
      if (res.destroyed) return;
      res.write(chunks[i]);
      if (i === 0 && this.gate) await this.gate;
      else await new Promise((r) => setImmediate(r));
    }
    res.end();
  }

  sendJson(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  /** Answers with the vendor's error format. */
  fail(res: ServerResponse, status: number, message: string): void {
    const e = this.spec.errorBody(status, message);
    res.writeHead(status, { 'content-type': e.contentType ?? 'application/json', ...e.headers }).end(e.body);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const u = new URL(req.url ?? '/', 'http://double');
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: u.pathname,
      query: u.searchParams,
      headers: req.headers,
      body: Buffer.concat(parts),
    };
    this.requests.push(rec);
    try {
      const failure = this.failures.shift() ?? this.lasting ?? undefined;
      if (failure?.raw)
        return void res.writeHead(failure.status, { 'content-type': failure.raw.contentType }).end(failure.raw.body);
      if (failure) return this.fail(res, failure.status, failure.message);
      if (!this.spec.public?.(rec) && !this.spec.authorize(rec, this)) {
        return this.fail(res, 401, 'invalid credentials');
      }
      if (!(await this.spec.route(rec, res, this))) this.fail(res, 404, `no route ${rec.method} ${rec.path}`);
    } catch (e) {
      if (!res.headersSent) this.fail(res, 400, (e as Error).message);
      else res.destroy();
    }
  }
}

export async function startHttpDouble(spec: HttpDoubleSpec, key = `test-key-${spec.name}`): Promise<HttpDouble> {
  return new HttpDouble(spec, key).start();
}

/** Throws (→ a 400 in the vendor's format) unless the condition holds: the double's request-shape checks. */
export function expectShape(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(`bad request shape: ${message}`);
}

/** Parses a multipart/form-data body the way a server would. */
export async function formDataOf(req: RecordedRequest): Promise<FormData> {
  const ct = String(req.headers['content-type'] ?? '');
  expectShape(ct.startsWith('multipart/form-data'), `content-type ${ct} is not multipart/form-data`);
  return new Response(req.body, { headers: { 'content-type': ct } }).formData();
}

// A plain recording server, for doubles that script their answers per request (LLM streams, tool endpoints).

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
}

export interface Double {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

/** A local HTTP server on port 0 that records every request and answers with `handle`. */
export async function startDouble(
  handle: (rec: Recorded, res: ServerResponse, index: number) => void | Promise<void>,
): Promise<Double> {
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = body ? JSON.parse(body) : null;
      } catch {
        json = null;
      }
      const rec: Recorded = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, json };
      requests.push(rec);
      Promise.resolve(handle(rec, res, requests.length - 1)).catch((e: Error) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(e.message));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Splits a string into pieces of at most n characters (how vendors fragment deltas). */
export function pieces(s: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out.length ? out : [''];
}
