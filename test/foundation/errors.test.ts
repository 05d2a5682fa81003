import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

interface ErrorBody {
  error: { type: string; code: string; message: string; param: string | null; requestId: string };
}

let p: TestPlatform;
let key: string;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  key = (await p.developer()).apiKey;
});
afterAll(() => p?.close());

async function envelope(res: Response, status: number, code: string): Promise<ErrorBody> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as ErrorBody;
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.requestId).toBe(res.headers.get('x-request-id'));
  return body;
}

describe('error envelope', () => {
  it('malformed JSON is a 400, never a 500', async () => {
    const res = await p.request('/v1/keys', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: '{"name": ',
    });
    await envelope(res, 400, 'invalid_json');
  });

  it('wrong types name the field', async () => {
    const res = await p.request('/v1/keys', { method: 'POST', key, json: { name: ['a'] } });
    const body = await envelope(res, 400, 'validation_failed');
    expect(body.error.param).toBe('name');
  });

  it('unsupported content types are 415', async () => {
    const res = await p.request('/v1/keys', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/xml' },
      body: '<a/>',
    });
    await envelope(res, 415, 'unsupported_media_type');
  });

  it('unknown routes are 404 in the envelope, with or without a key', async () => {
    await envelope(await p.request('/v1/nope', { key }), 404, 'route_not_found');
    await envelope(await p.request('/nope'), 404, 'route_not_found');
  });

  it('replaces an invalid incoming request id and echoes a valid one', async () => {
    const bad = await p.request('/healthz', { headers: { 'x-request-id': 'has spaces; and/slashes' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^req_/);
    const good = await p.request('/healthz', { headers: { 'x-request-id': 'abc-123' } });
    expect(good.headers.get('x-request-id')).toBe('abc-123');
  });

  it('garbage bodies of every kind never produce a 500', async () => {
    // An empty body is no body, which POST /v1/keys accepts (test/foundation/keys.test.ts).
    const bodies = ['null', '[]', '"str"', '{"name":null}', '{"expiresInDays":1e309}', '\u0000', '{"a":'.repeat(200)];
    for (const body of bodies) {
      const res = await p.request('/v1/keys', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(res.status, `body ${JSON.stringify(body).slice(0, 40)}`).toBeLessThan(500);
      expect(((await res.json()) as ErrorBody).error).toBeDefined();
    }
  });
});

describe('service endpoints', () => {
  it('serves health, readiness, metrics and the OpenAPI document', async () => {
    expect((await p.request('/healthz')).status).toBe(200);
    const ready = (await (await p.request('/readyz')).json()) as { checks: Record<string, string> };
    expect(ready.checks).toEqual({ postgres: 'ok', redis: 'ok', s3: 'ok' });
    await p.request('/v1/me', { key });
    const metrics = await (await p.request('/metrics')).text();
    expect(metrics).toContain('http_request_duration_seconds_bucket');
    expect(metrics).toContain('route="/v1/me"');
    expect(metrics).toContain('queue_oldest_waiting_job_age_seconds{queue="cpu"}');
    expect(metrics).toContain('bullmq_job_count');
    const doc = (await (await p.request('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/keys',
        '/v1/keys/{id}/rotate',
        '/v1/me',
        '/v1/sessions/twilio/stream',
        '/v1/agents/{id}/session',
      ]),
    );
    expect((await p.request('/docs/')).status).toBe(200);
  });
});
