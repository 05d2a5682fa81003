import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError } from '../../shared/kernel/errors/api-error.ts';
import type { MeterInput } from '../../shared/platform/metering/types.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'], env: { TIER_STARTER_MONTHLY_CREDITS: '50' } });
});
afterAll(() => p?.close());

const input = (developerId: string, over: Partial<MeterInput> = {}): MeterInput => ({
  developerId,
  category: 'tts',
  units: 1,
  unit: 'characters',
  provider: 'default',
  billable: true,
  requestId: `req_${randomBytes(6).toString('hex')}`,
  operation: 'synthesize',
  ...over,
});

describe('meter', () => {
  it('100 concurrent charges against a balance of 50 spend exactly 50 and refuse the rest with 402', async () => {
    const { developerId } = await p.developer('starter');
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, () => p.infra.meter.reserve(input(developerId)).then((r) => r.commit())),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter(
      (r) => r.status === 'rejected' && isApiError(r.reason) && r.reason.code === 'insufficient_credits',
    ).length;
    expect(ok).toBe(50);
    expect(refused).toBe(50);
    const { rows } = await p.infra.db.query<{ used: number }>(
      'select used from credit_accounts where developer_id = $1',
      [developerId],
    );
    expect(rows[0]!.used).toBe(50);
    expect(await p.infra.meter.snapshot(developerId)).toEqual({ used: 50, limit: 50, remaining: 0 });
  });

  it('says how many credits were needed and how many remain', async () => {
    const { developerId } = await p.developer('starter');
    await (await p.infra.meter.reserve(input(developerId, { units: 45 }))).commit();
    const err = await p.infra.meter.reserve(input(developerId, { units: 10 })).catch((e: unknown) => e);
    expect(isApiError(err) && err.status).toBe(402);
    expect((err as Error).message).toContain('needs 10 and 5 remain');
  });

  it('check refuses as reserve would, without holding or recording anything', async () => {
    const { developerId } = await p.developer('starter');
    await p.infra.meter.check(input(developerId, { units: 50 }));
    await (await p.infra.meter.reserve(input(developerId, { units: 45 }))).commit();
    const err = await p.infra.meter.check(input(developerId, { units: 10 })).catch((e: unknown) => e);
    expect(isApiError(err) && err.status).toBe(402);
    expect((err as Error).message).toContain('needs 10 and 5 remain');
    await p.infra.meter.check(input(developerId, { units: 5 }));
    await p.infra.meter.check(input(developerId, { units: 10, billable: false }));
    const { rows } = await p.infra.db.query<{ n: number; used: number }>(
      `select (select count(*)::int from credit_ledger where developer_id = $1) as n,
              (select used from credit_accounts where developer_id = $1) as used`,
      [developerId],
    );
    expect(rows[0]).toEqual({ n: 1, used: 45 });
  });

  it('records non-billable usage with 0 credits and never refuses it', async () => {
    const { developerId } = await p.developer('starter');
    await (await p.infra.meter.reserve(input(developerId, { units: 50 }))).commit();
    const r = await p.infra.meter.reserve(input(developerId, { units: 1000, billable: false, provider: 'openai' }));
    expect(r.credits).toBe(0);
    await r.commit(1200);
    const { rows } = await p.infra.db.query<{ credits: number; units: number; billable: boolean; status: string }>(
      'select credits, units, billable, status from credit_ledger where developer_id = $1 and not billable',
      [developerId],
    );
    expect(rows).toEqual([{ credits: 0, units: 1200, billable: false, status: 'committed' }]);
    expect((await p.infra.meter.snapshot(developerId)).used).toBe(50);
  });

  it('settles to actual units and refunds a failed operation', async () => {
    const { developerId } = await p.developer('starter');
    const a = await p.infra.meter.reserve(input(developerId, { units: 20 }));
    await a.commit(12);
    expect((await p.infra.meter.snapshot(developerId)).used).toBe(12);
    const b = await p.infra.meter.reserve(input(developerId, { units: 30 }));
    expect((await p.infra.meter.snapshot(developerId)).used).toBe(42);
    await b.refund();
    await b.commit(); // settled once: no effect
    expect((await p.infra.meter.snapshot(developerId)).used).toBe(12);
    // More than held on a hard-limit tier: charged as far as the balance goes, the rest recorded as waived.
    const c = await p.infra.meter.reserve(input(developerId, { units: 10 }));
    await c.commit(60);
    expect(await p.infra.meter.snapshot(developerId)).toEqual({ used: 50, limit: 50, remaining: 0 });
  });
});

describe('meter: settle without a hold', () => {
  it('charges a 0-unit reservation at commit, even as the first operation of a new developer', async () => {
    const { developerId } = await p.developer('starter');
    const r = await p.infra.meter.reserve(input(developerId, { units: 0, operation: 'session.tts' }));
    expect(r.credits).toBe(0);
    await r.commit(30);
    expect((await p.infra.meter.snapshot(developerId)).used).toBe(30);
    const { rows } = await p.infra.db.query<{ credits: number; status: string }>(
      'select credits, status from credit_ledger where developer_id = $1',
      [developerId],
    );
    expect(rows).toEqual([{ credits: 30, status: 'committed' }]);
  });
});
