import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

interface ErrorBody {
  error: { type: string; code: string; message: string; param: string | null; requestId: string };
}

let p: TestPlatform;
let key: string;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api', 'realtime'] });
  key = (await p.developer()).apiKey;
});
afterAll(() => p?.close());

async function envelope(res: Response, status: number, code: string): Promise<ErrorBody> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status });
  const body = JSON.parse(text) as ErrorBody;
  expect(body.error.code).toBe(code);
  expect(body.error.requestId).toBe(res.headers.get('x-request-id'));
  return body;
}

/** Sends raw bytes and reads the whole answer: Node's HTTP parser rejects these before Fastify (or fetch) can. */
function rawRequest(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  const url = new URL(p.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
  });
}

const uploadRoutes = ['/v1/transcribe', '/v1/transcribe/async', '/v1/audio/transcriptions'];

describe('NUL bytes (Postgres rejects U+0000: these were 500s)', () => {
  it('a NUL in a path id is a 400, not a 500', async () => {
    for (const path of ['/v1/agents/a%00b', '/v1/transcribe/job%00', '/v1/collections/%00']) {
      const body = await envelope(await p.request(path, { key }), 400, 'validation_failed');
      expect(body.error.message).toMatch(/NUL/);
    }
  });

  it('a NUL in a JSON string at any depth is a 400 naming the field', async () => {
    const res = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'ok', metadata: { a: { b: ['fine', 'a\u0000b'] } } },
    });
    const body = await envelope(res, 400, 'validation_failed');
    expect(body.error.param).toBe('metadata.a.b[1]');
    const top = await p.request('/v1/keys', { method: 'POST', key, json: { name: 'x\u0000' } });
    expect((await envelope(top, 400, 'validation_failed')).error.param).toBe('name');
  });

  it('a NUL in a query parameter is a 400', async () => {
    const res = await p.request('/v1/observability/sessions?agentId=a%00', { key });
    expect((await envelope(res, 400, 'validation_failed')).error.param).toBe('agentId');
  });

  it('a NUL in a multipart field is a 400', async () => {
    const form = new FormData();
    form.set('language', 'e\u0000n');
    form.set('file', new Blob([Buffer.from('RIFF')], { type: 'audio/wav' }), 'a.wav');
    const res = await p.request('/v1/transcribe', { method: 'POST', key, body: form });
    expect((await envelope(res, 400, 'validation_failed')).error.param).toBe('language');
  });
});

describe('malformed multipart on the three upload routes (were 500s)', () => {
  for (const path of uploadRoutes) {
    it(`${path}: no boundary and a truncated body are 400 invalid_multipart`, async () => {
      const cases = [
        ['multipart/form-data', 'x'],
        [
          'multipart/form-data; boundary=zz',
          '--zz\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF',
        ],
      ];
      for (const [type, body] of cases) {
        const res = await p.request(path, { method: 'POST', key, headers: { 'content-type': type! }, body });
        await envelope(res, 400, 'invalid_multipart');
      }
    });
  }
});

describe('framework and HTTP-parser errors in the envelope, never echoing the input', () => {
  it('an over-long path parameter is 414 in the envelope without the parameter', async () => {
    const long = 'q'.repeat(3000);
    const res = await p.request(`/v1/agents/${long}`, { key });
    const body = await envelope(res, 414, 'uri_too_long');
    expect(JSON.stringify(body)).not.toContain('q'.repeat(50));
  });

  it('bad percent-encoding in the path is 400 in the envelope', async () => {
    await envelope(await p.request('/v1/agents/%FF%FE', { key }), 400, 'bad_request');
  });

  it('headers over the limit are 431 in the envelope (raw socket)', async () => {
    const res = await rawRequest(`GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    const body = JSON.parse(res.body) as ErrorBody;
    expect(body.error.code).toBe('headers_too_large');
    expect(res.headers).toContain(`X-Request-Id: ${body.error.requestId}`);
    expect(res.body).not.toContain('hhhh');
  });

  it('a URL over the limit is 414 in the envelope (raw socket)', async () => {
    const res = await rawRequest(`GET /v1/agents?x=${'u'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.status).toBe(414);
    expect((JSON.parse(res.body) as ErrorBody).error.code).toBe('uri_too_long');
    expect(res.body).not.toContain('uuuu');
  });

  it('malformed HTTP is 400 in the envelope (raw socket)', async () => {
    const res = await rawRequest('GET /v1/me HTTP/1.1\r\nHost x\r\n\r\n');
    expect(res.status).toBe(400);
    expect((JSON.parse(res.body) as ErrorBody).error.code).toBe('bad_request');
  });

  it('a plain GET on a WebSocket route is 426 in the envelope (was an empty 404)', async () => {
    await envelope(await p.request('/v1/sessions/twilio/stream'), 426, 'upgrade_required');
    await envelope(await p.request('/v1/agents/a/session', { key }), 426, 'upgrade_required');
  });
});
