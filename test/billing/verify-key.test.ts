import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyVendorKey } from '../../shared/domains/billing/verify-key.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';

/**
 * Provider-key verification against a local server speaking OpenAI's `GET /models` (port 0, real sockets): which
 * vendor answers make a key valid, rejected or the vendor unreachable, within one deadline for the whole check.
 */
let server: Server;
let base: string;
let answers: Array<(res: ServerResponse) => void>;
let seen: string[];

const answer = (status: number) => (res: ServerResponse) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end('{"error":{"message":"x"}}');

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
    (answers.shift() ?? answer(200))(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
beforeEach(() => {
  answers = [];
  seen = [];
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const config = (env: Record<string, string> = {}) =>
  loadConfig({ OPENAI_BASE_URL: base, OUTBOUND_TIMEOUT_MS: '1500', ...env });

describe('verifyVendorKey', () => {
  it('valid on 2xx, rejected on 401/403, with the key sent as the vendor expects', async () => {
    expect(await verifyVendorKey(config(), 'openai', 'sk-good')).toEqual({ kind: 'valid' });
    expect(seen).toEqual(['GET /v1/models Bearer sk-good']);
    answers.push(answer(403));
    expect(await verifyVendorKey(config(), 'openai', 'sk-bad')).toEqual({ kind: 'rejected', status: 403 });
    expect(await verifyVendorKey(config(), 'voyage', 'k')).toEqual({ kind: 'unsupported' });
  });

  it('a 5xx is asked again (a read), and reported with its status when it stays', async () => {
    answers.push(answer(503));
    expect(await verifyVendorKey(config(), 'openai', 'sk')).toEqual({ kind: 'valid' });
    expect(seen).toHaveLength(2);
    seen = [];
    answers.push(answer(500), answer(500), answer(500));
    expect(await verifyVendorKey(config(), 'openai', 'sk')).toEqual({ kind: 'unreachable', detail: 'HTTP 500' });
    expect(seen).toHaveLength(3);
  });

  it('a vendor that never answers times out within the one deadline; no server is a network error', async () => {
    answers.push(
      () => {},
      () => {},
      () => {},
    );
    const t0 = Date.now();
    expect(await verifyVendorKey(config(), 'openai', 'sk')).toEqual({ kind: 'unreachable', detail: 'timed out' });
    expect(Date.now() - t0).toBeLessThan(4000);
    const closed = config({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(await verifyVendorKey(closed, 'openai', 'sk')).toEqual({ kind: 'unreachable', detail: 'network error' });
  });
});
