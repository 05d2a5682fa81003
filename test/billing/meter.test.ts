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

describe('meter: holds opened and grown together (holdAll)', () => {
  const used = async (developerId: string) =>
    (
      await p.infra.db.query<{ used: number }>('select used from credit_accounts where developer_id = $1', [
        developerId,
      ])
    ).rows[0]!.used;

  it('opens new holds and grows held ones in one step, and settles each on its own', async () => {
    const { developerId } = await p.developer('starter');
    const a = await p.infra.meter.reserve(input(developerId, { units: 5 }));
    const [a2, b] = await p.infra.meter.holdAll([
      { hold: a, input: input(developerId, { units: 12 }) },
      { hold: null, input: input(developerId, { units: 8 }) },
    ]);
    expect(a2).toBe(a);
    expect(a.credits).toBe(12);
    expect(b!.credits).toBe(8);
    expect(await used(developerId)).toBe(20);
    // A hold never shrinks: asking for less leaves it as it is, with no statement at all.
    await p.infra.meter.holdAll([{ hold: a, input: input(developerId, { units: 3 }) }]);
    expect(a.credits).toBe(12);
    await a.commit(10);
    await b!.commit(0);
    expect(await used(developerId)).toBe(10);
  });

  it('all or none: a growth the balance cannot cover together leaves every hold as it was', async () => {
    const { developerId } = await p.developer('starter');
    const a = await p.infra.meter.reserve(input(developerId, { units: 20 }));
    const b = await p.infra.meter.reserve(input(developerId, { units: 20 }));
    // 10 more fits; 10 + 10 + a new 5 does not (50 - 40 = 10 remain).
    const err = await p.infra.meter
      .holdAll([
        { hold: a, input: input(developerId, { units: 30 }) },
        { hold: b, input: input(developerId, { units: 30 }) },
        { hold: null, input: input(developerId, { units: 5 }) },
      ])
      .catch((e: unknown) => e);
    expect(isApiError(err) && err.code).toBe('insufficient_credits');
    expect((err as Error).message).toContain('needs 25 and 10 remain');
    expect([a.credits, b.credits]).toEqual([20, 20]);
    expect(await used(developerId)).toBe(40);
    const { rows } = await p.infra.db.query<{ n: number }>(
      'select count(*)::int as n from credit_ledger where developer_id = $1',
      [developerId],
    );
    expect(rows[0]!.n).toBe(2);
    await p.infra.meter.holdAll([{ hold: a, input: input(developerId, { units: 30 }) }]);
    expect(await used(developerId)).toBe(50);
  });

  it('50 concurrent groups of two holds against a balance of 50 spend exactly 50', async () => {
    const { developerId } = await p.developer('starter');
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () =>
        p.infra.meter.holdAll([
          { hold: null, input: input(developerId) },
          { hold: null, input: input(developerId) },
        ]),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    expect(ok).toBe(25);
    expect(await used(developerId)).toBe(50);
  });
});
