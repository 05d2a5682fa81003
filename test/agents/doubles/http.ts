import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
