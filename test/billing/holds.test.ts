import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobHoldKey } from '../../shared/platform/metering/hold-keys.ts';
import { sweepHolds } from '../../shared/domains/billing/hold-sweeper.ts';
import type { MeterInput } from '../../shared/platform/metering/types.ts';
import { heldTranscriptionJobSql, insertTranscriptionJob } from '../../shared/domains/speech/transcription-store.ts';
import { heldVideoJobSql } from '../../shared/domains/video/store.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/** The job subqueries the reconciler hands the sweeper (shared/composition/reconciler.ts). */
const JOBS = [heldTranscriptionJobSql, heldVideoJobSql] as const;

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'], env: { TIER_STARTER_MONTHLY_CREDITS: '1000' } });
});
afterAll(() => p?.close());

const input = (developerId: string, over: Partial<MeterInput> = {}): MeterInput => ({
  developerId,
  category: 'stt',
  units: 40,
  unit: 'audio seconds',
  provider: 'default',
  billable: true,
  requestId: `req_${randomBytes(6).toString('hex')}`,
  operation: 'transcribe',
  ...over,
});

async function used(developerId: string): Promise<number> {
  const { rows } = await p.infra.db.query<{ used: number }>(
    'select used from credit_accounts where developer_id = $1',
    [developerId],
  );
  return rows[0]!.used;
}

async function ledger(developerId: string): Promise<{ status: string; credits: number }[]> {
  const { rows } = await p.infra.db.query<{ status: string; credits: number }>(
    'select status, credits from credit_ledger where developer_id = $1 order by created_at',
    [developerId],
  );
  return rows;
}

async function newJob(developerId: string): Promise<string> {
  const id = newId('job');
  await insertTranscriptionJob(p.infra.db, {
    id,
    developer_id: developerId,
    provider: 'default',
    options: {},
    source: { kind: 'url', url: 'http://example.invalid/a.wav' },
    request_id: id,
  });
  return id;
}

describe('job holds', () => {
  it('regression: an interrupted job retried reserved and committed a second hold (charged twice)', async () => {
    const { developerId } = await p.developer('starter');
    const key = jobHoldKey('transcription', 'job_retried');
    const first = await p.infra.meter.reserve(input(developerId, { holdKey: key }));
    // The first run dies here; the retry reserves again under the same key and finishes.
    const retry = await p.infra.meter.reserve(input(developerId, { holdKey: key }));
    await retry.commit(40);
    await first.commit(40);
    const again = await p.infra.meter.reserve(input(developerId, { holdKey: key }));
    await again.commit(40);
    const rows = await ledger(developerId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('committed');
    expect(await used(developerId)).toBe(rows[0]!.credits);
  });

  it('concurrent reserves under one key hold once', async () => {
    const { developerId } = await p.developer('starter');
    const key = jobHoldKey('transcription', 'job_raced');
    const holds = await Promise.all(
      Array.from({ length: 8 }, () => p.infra.meter.reserve(input(developerId, { holdKey: key }))),
    );
    await Promise.all(holds.map((h) => h.commit(40)));
    expect(await ledger(developerId)).toHaveLength(1);
  });

  it('a refunded hold frees its key: the retry of a failed attempt holds again', async () => {
    const { developerId } = await p.developer('starter');
    const key = jobHoldKey('transcription', 'job_refunded');
    await (await p.infra.meter.reserve(input(developerId, { holdKey: key }))).refund();
    await (await p.infra.meter.reserve(input(developerId, { holdKey: key }))).commit(40);
    expect((await ledger(developerId)).map((r) => r.status)).toEqual(['refunded', 'committed']);
  });

  it('regression: a refund whose connection dropped mid-UPDATE was marked settled and the hold stayed reserved', async () => {
    const { developerId } = await p.developer('starter');
    const hold = await p.infra.meter.reserve(input(developerId));
    const before = await used(developerId);
    // Hold the ledger row's lock so the refund's UPDATE waits; then cut that connection as a restart would.
    const blocker = await p.infra.db.connect();
    try {
      await blocker.query('begin');
      await blocker.query(`select 1 from credit_ledger where developer_id = $1 for update`, [developerId]);
      const refunding = hold.refund();
      // Polled outside the blocker's transaction: inside it, pg_stat_activity is one snapshot for the whole
      // transaction (stats_fetch_consistency = cache), and a first poll before the UPDATE arrived never changes.
      const pid = await waitUntil(async () => {
        const { rows } = await p.infra.db.query<{ pid: number }>(
          `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'
             and query like '%credit_ledger set status = ''refunded''%'`,
        );
        return rows[0]?.pid;
      });
      await blocker.query('select pg_terminate_backend($1)', [pid]);
      await blocker.query('commit');
      await refunding;
    } finally {
      blocker.release();
    }
    expect((await ledger(developerId)).map((r) => r.status)).toEqual(['refunded']);
    expect(await used(developerId)).toBe(before - hold.credits);
  });

  it('the sweeper commits a finished job’s left hold, refunds a failed or missing one, leaves a running one', async () => {
    const { developerId } = await p.developer('starter');
    const [done, failed, running] = [await newJob(developerId), await newJob(developerId), await newJob(developerId)];
    for (const id of [done, failed, running, 'job_gone'])
      await p.infra.meter.reserve(input(developerId, { holdKey: jobHoldKey('transcription', id), requestId: id }));
    await p.infra.meter.reserve(input(developerId)); // a request's hold, no key
    await p.infra.db.query(
      `update transcription_jobs set status = 'completed', audio_seconds = 20, completed_at = now() where id = $1`,
      [done],
    );
    await p.infra.db.query(`update transcription_jobs set status = 'failed', completed_at = now() where id = $1`, [
      failed,
    ]);
    const out = await sweepHolds(p.infra, { afterMs: 0, unkeyedAfterMs: 0, jobs: JOBS });
    expect(out).toEqual({ committed: 1, refunded: 3 });
    const { rows } = await p.infra.db.query<{ hold_key: string | null; status: string; units: number }>(
      'select hold_key, status, units from credit_ledger where developer_id = $1',
      [developerId],
    );
    const by = Object.fromEntries(rows.map((r) => [r.hold_key ?? 'request', r]));
    expect(by[jobHoldKey('transcription', done)]).toMatchObject({ status: 'committed', units: 20 });
    expect(by[jobHoldKey('transcription', failed)]!.status).toBe('refunded');
    expect(by[jobHoldKey('transcription', 'job_gone')]!.status).toBe('refunded');
    expect(by[jobHoldKey('transcription', running)]!.status).toBe('reserved');
    expect(by.request!.status).toBe('refunded');
    expect(await sweepHolds(p.infra, { afterMs: 0, unkeyedAfterMs: 0, jobs: JOBS })).toEqual({
      committed: 0,
      refunded: 0,
    });
  });
});
