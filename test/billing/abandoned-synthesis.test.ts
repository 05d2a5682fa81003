import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue #24 finding 2: a streamed synthesis the client abandoned at 95 % of its bytes was refunded in full. The
 * rule now (docs/billing.md): an abandoned stream is charged for the share of its audio that was delivered.
 */
let p: TestPlatform;
let key: string;
let developerId: string;

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  ({ apiKey: key, developerId } = await p.developer('pro'));
}, 120_000);
afterAll(() => p?.close());

// About 1,800 characters of plain sentences, as in the probe.
const TEXT = Array.from(
  { length: 24 },
  (_, i) => `Sentence number ${i + 1} tells the listener about the weather and the opening hours.`,
)
  .join(' ')
  .slice(0, 1800);

/** Streams POST /v1/synthesize; stops reading (destroys the socket) once `stopAt` bytes have arrived. */
function synthesize(stopAt: number): Promise<{ requestId: string; bytes: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const u = new URL('/v1/synthesize', p.url);
    const req = request(
      u,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      },
      (res) => {
        const requestId = String(res.headers['x-request-id']);
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (bytes >= stopAt) {
            req.destroy();
            resolve({ requestId, bytes, complete: false });
          }
        });
        res.on('end', () => resolve({ requestId, bytes, complete: true }));
        res.on('error', () => resolve({ requestId, bytes, complete: false }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ text: TEXT, format: 'wav' }));
  });
}

async function settledRow(requestId: string) {
  return waitUntil(async () => {
    const { rows } = await p.infra.db.query<{ units: number; credits: number; status: string }>(
      `select units::float8 as units, credits, status from credit_ledger where developer_id = $1 and request_id = $2`,
      [developerId, requestId],
    );
    return rows[0] && rows[0].status !== 'reserved' ? rows[0] : null;
  }, 30_000);
}

describe('abandoned streamed synthesis (issue #24 finding 2)', () => {
  it('read to the end: charged in full', async () => {
    const full = await synthesize(Infinity);
    expect(full.complete).toBe(true);
    expect(await settledRow(full.requestId)).toMatchObject({ units: TEXT.length, status: 'committed' });
  });

  it('left at 95 % of the bytes: charged for what was delivered, never refunded', async () => {
    const full = await synthesize(Infinity);
    const cut = await synthesize(Math.floor(full.bytes * 0.95));
    expect(cut.complete).toBe(false);
    const row = await settledRow(cut.requestId);
    expect(row.status).toBe('committed');
    expect(row.units).toBeGreaterThanOrEqual(Math.floor(TEXT.length * 0.85));
    expect(row.units).toBeLessThanOrEqual(TEXT.length);
    expect(row.credits).toBe(row.units);
  });

  it('left after the first tenth: charged in proportion, far from the whole text', async () => {
    const full = await synthesize(Infinity);
    const cut = await synthesize(Math.floor(full.bytes * 0.1));
    const row = await settledRow(cut.requestId);
    expect(row.status).toBe('committed');
    expect(row.units).toBeGreaterThan(0);
    expect(row.units).toBeLessThan(TEXT.length * 0.6);
  });
});
