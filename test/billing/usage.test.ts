import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMonthsUtc } from '../../shared/platform/metering/accounts.ts';
import { createMeter } from '../../shared/platform/metering/meter.ts';
import type { MeterInput } from '../../shared/platform/metering/types.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(() => p?.close());

const charge = async (developerId: string, over: Partial<MeterInput> = {}) => {
  const r = await p.infra.meter.reserve({
    developerId,
    category: 'tts',
    units: 100,
    unit: 'characters',
    provider: 'default',
    billable: true,
    requestId: `req_${randomBytes(6).toString('hex')}`,
    operation: 'synthesize',
    ...over,
  });
  await r.commit();
  return r;
};

type UsageBody = {
  credits: { used: number; limit: number; remaining: number };
  breakdown: Record<string, number>;
  requestCount: number;
  period: { start: string; end: string };
};

describe('usage', () => {
  it('reports credits, the breakdown by category and the request count of the period', async () => {
    const { apiKey, developerId } = await p.developer();
    const empty = await p.request('/v1/usage', { key: apiKey });
    expect(empty.status).toBe(200);
    expect(await empty.json()).toMatchObject({
      credits: { used: 0, limit: 50000, remaining: 50000 },
      breakdown: { tts: 0, stt: 0, llm: 0, rag: 0, video: 0 },
      requestCount: 0,
    });

    await charge(developerId, { units: 120 }); // 120 credits
    await charge(developerId, { category: 'stt', operation: 'transcribe', units: 10.2, unit: 'audio seconds' }); // 51
    await charge(developerId, { category: 'llm', operation: 'chat', units: 1234, unit: 'tokens' }); // 124
    await charge(developerId, { category: 'video', operation: 'video.generate', units: 5, unit: 'seconds' }); // 500
    await charge(developerId, { billable: false, provider: 'elevenlabs', units: 999 }); // recorded, 0 credits
    const refunded = await p.infra.meter.reserve({
      developerId,
      category: 'rag',
      units: 1,
      unit: 'queries',
      provider: 'default',
      billable: true,
      requestId: 'req_refunded',
      operation: 'search',
    });
    await refunded.refund();

    const res = await p.request('/v1/usage', { key: apiKey });
    const body = (await res.json()) as UsageBody;
    expect(body.credits).toEqual({ used: 795, limit: 50000, remaining: 49205 });
    expect(body.breakdown).toEqual({ tts: 120, stt: 51, llm: 124, rag: 0, video: 500, session: 0 });
    expect(body.requestCount).toBe(5);
    expect(new Date(body.period.end).getTime()).toBeGreaterThan(Date.now());
    expect(res.headers.get('x-usage-current')).toBe('795');
    expect(res.headers.get('x-usage-limit')).toBe('50000');
    expect(res.headers.get('x-usage-remaining')).toBe('49205');
  });

  it('puts the usage headers on every authenticated response, errors included, and on none without a key', async () => {
    const { apiKey, developerId } = await p.developer();
    await charge(developerId, { units: 7 });
    for (const [path, status] of [
      ['/v1/keys', 200],
      ['/v1/provider-keys/nosuch/verify', 404],
    ] as const) {
      const res = await p.request(path, { key: apiKey, method: path.endsWith('verify') ? 'POST' : 'GET' });
      expect(res.status).toBe(status);
      expect(res.headers.get('x-usage-current')).toBe('7');
      expect(res.headers.get('x-usage-limit')).toBe('50000');
      expect(res.headers.get('x-usage-remaining')).toBe('49993');
      expect(res.headers.get('x-usage-bypassed')).toBe('false');
      expect(res.headers.get('x-provider-used')).toBe('none');
    }
    const anon = await p.request('/v1/usage');
    expect(anon.status).toBe(401);
    expect(anon.headers.get('x-usage-current')).toBeNull();
  });

  it('answers 402 insufficient_credits on a hard-limit tier, and lets an overage tier run past its limit', async () => {
    const starter = await p.developer('starter');
    await charge(starter.developerId, { units: 49990 });
    const err = await charge(starter.developerId, { units: 25 }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'insufficient_credits', status: 402 });
    expect((err as Error).message).toMatch(/needs 25 and 10 remain/);

    const pro = await p.developer('pro');
    await charge(pro.developerId, { units: 199_990 });
    await charge(pro.developerId, { units: 25 });
    const body = (await (await p.request('/v1/usage', { key: pro.apiKey })).json()) as UsageBody;
    expect(body.credits).toEqual({ used: 200_015, limit: 200_000, remaining: 0 });
  });

  it('answers a metered route with the 402 envelope and the usage headers when the balance is spent', async () => {
    const { apiKey, developerId } = await p.developer('starter');
    await charge(developerId, { units: 50_000 });
    const col = await p.request('/v1/collections', { method: 'POST', key: apiKey, json: { name: 'spent' } });
    expect(col.status).toBe(201);
    const { id } = (await col.json()) as { id: string };
    const res = await p.request(`/v1/collections/${id}/ingest`, {
      method: 'POST',
      key: apiKey,
      json: { content: 'Credits ran out before this document could be embedded. '.repeat(10) },
    });
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error).toMatchObject({ code: 'insufficient_credits', type: 'billing_error' });
    expect(body.error.message).toMatch(/needs \d+ and 0 remain/);
    expect(res.headers.get('x-usage-remaining')).toBe('0');
    expect(res.headers.get('x-usage-current')).toBe('50000');
  });

  it('rolls the period over with carry-over capped at carryoverMonths × monthly credits', async () => {
    const { apiKey, developerId } = await p.developer('pro'); // 200000 a month, 1 month of carry-over
    await charge(developerId, { units: 50_000 });
    const endPeriod = (monthsBack: number) =>
      p.infra.db.query(
        `update credit_accounts set cycle_anchor = $2, period_index = 0, period_start = $2, period_end = $3
          where developer_id = $1`,
        [developerId, addMonthsUtc(new Date(), -monthsBack), addMonthsUtc(new Date(Date.now() - 1000), 1 - monthsBack)],
      );
    await endPeriod(1);
    let body = (await (await p.request('/v1/usage', { key: apiKey })).json()) as UsageBody;
    expect(body.credits).toEqual({ used: 0, limit: 350_000, remaining: 350_000 });
    expect(body.breakdown.tts).toBe(0);

    // Another month with nothing used: 350000 unused, but at most one month (200000) carries.
    await endPeriod(1);
    body = (await (await p.request('/v1/usage', { key: apiKey })).json()) as UsageBody;
    expect(body.credits).toEqual({ used: 0, limit: 400_000, remaining: 400_000 });

    // A starter account (no carry-over) starts again from its monthly credits.
    const s = await p.developer('starter');
    await charge(s.developerId, { units: 10 });
    await p.infra.db.query(
      `update credit_accounts set cycle_anchor = $2, period_start = $2, period_end = $3 where developer_id = $1`,
      [s.developerId, addMonthsUtc(new Date(), -1), new Date(Date.now() - 1000)],
    );
    body = (await (await p.request('/v1/usage', { key: s.apiKey })).json()) as UsageBody;
    expect(body.credits).toEqual({ used: 0, limit: 50_000, remaining: 50_000 });
    expect(new Date(body.period.start).getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('shares a charge with other processes through Redis', async () => {
    const { developerId } = await p.developer();
    const other = createMeter({
      db: p.infra.db,
      redis: p.infra.redis,
      config: { ...p.config, USAGE_CACHE_MS: 0 },
      log: p.infra.log,
    });
    expect((await other.snapshot(developerId)).used).toBe(0);
    await charge(developerId, { units: 33 });
    expect((await other.snapshot(developerId)).used).toBe(33);
  });
});

describe('OpenAPI', () => {
  it('documents the billing routes and hides the Stripe receiver', async () => {
    const res = await p.request('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, unknown> };
    for (const path of [
      '/v1/usage',
      '/v1/billing/subscription',
      '/v1/billing/checkout',
      '/v1/billing/portal',
      '/v1/provider-keys',
      '/v1/provider-keys/{provider}/verify',
      '/v1/provider-keys/{provider}',
    ]) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
    expect(doc.paths).not.toHaveProperty(['/webhooks/stripe']);
  });
});

describe('period arithmetic', () => {
  it('clamps to the end of shorter months without drifting', () => {
    const anchor = new Date('2026-01-31T10:00:00Z');
    expect(addMonthsUtc(anchor, 1).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(addMonthsUtc(anchor, 2).toISOString()).toBe('2026-03-31T10:00:00.000Z');
    expect(addMonthsUtc(anchor, 13).toISOString()).toBe('2027-02-28T10:00:00.000Z');
    expect(addMonthsUtc(new Date('2028-01-31T00:00:00Z'), 1).toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });
});
