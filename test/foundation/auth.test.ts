import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform } from '../../scripts/platform.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

interface ErrorBody {
  error: { type: string; code: string; message: string; requestId: string };
}

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(() => p?.close());

async function codeFor(headers: Record<string, string>): Promise<[number, string]> {
  const res = await p.request('/v1/me', { headers });
  const body = (await res.json()) as ErrorBody;
  return [res.status, body.error?.code];
}

describe('authentication', () => {
  it('answers 401 with a distinct code for each failure', async () => {
    expect(await codeFor({})).toEqual([401, 'missing_api_key']);
    expect(await codeFor({ authorization: 'Basic abc' })).toEqual([401, 'malformed_api_key']);
    expect(await codeFor({ authorization: 'Bearer sk_live_123' })).toEqual([401, 'malformed_api_key']);
    expect(await codeFor({ authorization: 'Bearer vap_short' })).toEqual([401, 'malformed_api_key']);
    expect(await codeFor({ authorization: `Bearer vap_${'A'.repeat(40)}` })).toEqual([401, 'invalid_api_key']);
  });

  it('rejects an expired key with expired_api_key', async () => {
    const { apiKey, keyId } = await p.developer();
    await p.infra.db.query("update api_keys set expires_at = now() - interval '1 second' where id = $1", [keyId]);
    expect(await codeFor({ authorization: `Bearer ${apiKey}` })).toEqual([401, 'expired_api_key']);
  });

  it('401 bodies use the envelope and carry the request id of the response', async () => {
    const res = await p.request('/v1/keys', { headers: { 'x-request-id': 'trace-abc-123' } });
    const body = (await res.json()) as ErrorBody;
    expect(res.headers.get('x-request-id')).toBe('trace-abc-123');
    expect(body.error.requestId).toBe('trace-abc-123');
    expect(body.error.type).toBe('authentication_error');
  });

  it('maintains lastUsedAt without a write per request', async () => {
    const { apiKey, keyId } = await p.developer();
    await p.request('/v1/me', { key: apiKey });
    const before = await p.infra.db.query('select last_used_at from api_keys where id = $1', [keyId]);
    expect(before.rows[0].last_used_at).toBeNull();
    await p.infra.authenticator.flushTouches();
    const after = await p.infra.db.query('select last_used_at from api_keys where id = $1', [keyId]);
    expect(after.rows[0].last_used_at).toBeInstanceOf(Date);
  });

  it('revocation in one process takes effect in another at once', async () => {
    // A second API process on the same database and Redis prefix: it caches the key on first use.
    const other = await startPlatform({ ...p.config, PORT: 0 }, createLogger('silent'), ['api']);
    try {
      const { apiKey, keyId } = await p.developer();
      const viaOther = () => fetch(`${other.url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect((await viaOther()).status).toBe(200);
      expect((await p.request(`/v1/keys/${keyId}`, { method: 'DELETE', key: apiKey })).status).toBe(204);
      // Pub/sub delivery is asynchronous (sub-millisecond when idle, seconds for a request on a loaded 2-core
      // machine): wait on the condition. The bound only has to stay under the cache's 60 s TTL, the backstop a
      // propagation failure would fall back to; 20 s is that with room either way.
      await waitUntil(async () => (await viaOther()).status === 401, 20_000, 25);
    } finally {
      await other.stop();
    }
  });
});
