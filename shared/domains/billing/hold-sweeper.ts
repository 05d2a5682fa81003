import type { Infra } from '../../platform/infra.ts';

/**
 * A job domain's subquery for the job a hold key names (`status`, `units`; at most one row): the job tables stay
 * with their owners, and billing, below them, takes their subqueries from the reconciler (composition) that wires
 * every domain (transcription-jobs.ts's heldTranscriptionJobSql, video/store.ts's heldVideoJobSql).
 */
export type HeldJobSql = (holdKey: string) => string;

interface LeftHold {
  id: string;
  hold_key: string | null;
  age_ms: number;
  job_status: string | null;
  job_units: number | null;
}

/**
 * Settles holds left `reserved` past the end of their work, which happens when a process dies between the work
 * and its settlement, or a refund outlasted its retries. A job's hold (keyed `transcription:<id>`/`video:<id>`)
 * follows its job: committed to the job's units when it completed and was charged, refunded when it failed or is
 * gone, left alone while it runs. A hold without a key (a request's) is refunded once it is older than
 * `unkeyedAfterMs`, far past any request's time limit. Voice-session holds (minutes and the running holds of a
 * call's engines, `session.*`) live as long as the call and are left alone. Every settlement is conditional on the hold still being reserved, so replicas sweeping at once settle
 * each hold once. The job tables are read through their owners' subqueries (a key names at most one job).
 */
export async function sweepHolds(
  infra: Infra,
  opts: { afterMs: number; unkeyedAfterMs: number; limit?: number; jobs: readonly [HeldJobSql, ...HeldJobSql[]] },
): Promise<{ committed: number; refunded: number }> {
  const { rows } = await infra.db.query<LeftHold>(
    `select l.id, l.hold_key, extract(epoch from now() - l.created_at) * 1000 as age_ms,
            j.status as job_status, j.units as job_units
       from credit_ledger l
       left join lateral (${opts.jobs.map((job) => job('l.hold_key')).join(' union all ')}) j on true
      where l.status = 'reserved' and l.category <> 'session' and l.operation not like 'session.%'
        and l.created_at < now() - make_interval(secs => $1::float / 1000)
      order by l.created_at limit $2`,
    [opts.afterMs, opts.limit ?? 200],
  );
  const out = { committed: 0, refunded: 0 };
  for (const hold of rows) {
    const units = decide(hold, opts.unkeyedAfterMs);
    if (units === undefined) continue;
    if (!(await infra.meter.settle(hold.id, units))) continue;
    if (units === null) out.refunded++;
    else out.committed++;
    infra.log.warn({ ledgerId: hold.id, holdKey: hold.hold_key, units }, 'left hold settled by the sweeper');
  }
  return out;
}

/** Units to commit, null to refund, undefined to leave the hold for now. */
function decide(hold: LeftHold, unkeyedAfterMs: number): number | null | undefined {
  if (!hold.hold_key) return hold.age_ms >= unkeyedAfterMs ? null : undefined;
  if (hold.job_status === 'completed' && hold.job_units !== null && hold.job_units > 0) return hold.job_units;
  if (hold.job_status === 'pending' || hold.job_status === 'processing') return undefined;
  return null;
}
