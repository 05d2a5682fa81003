import { jobHoldKey } from '../../platform/metering/hold-keys.ts';
import { heldOrChargedSql } from '../../platform/metering/ledger-reads.ts';
import type { Infra } from '../../platform/infra.ts';
import type { VideoJobRow } from './store.ts';

/** Unit name per job type (the credit-weight table's `video.<type>` operations). */
export function unitOf(type: VideoJobRow['type']): string {
  return type === 'analyze' ? 'input video seconds' : 'generated video seconds';
}

/**
 * Charges a finished job once. Called only by the run that moved the row to `completed` (a conditional UPDATE),
 * so a job rerun after a crash is charged by exactly one run; the hold's key (the job) makes a charge retried
 * after a failure, or redone by the reconciler after a crash, land once. Non-billable jobs (caller's own key) are recorded
 * with 0 credits by the meter. The ledger's request_id is the job id.
 */
export async function chargeJob(infra: Infra, row: VideoJobRow, units: number): Promise<void> {
  if (units <= 0) return;
  const reservation = await infra.meter.reserve({
    developerId: row.owner_id,
    category: 'video',
    units,
    unit: unitOf(row.type),
    provider: row.provider,
    billable: row.billable,
    requestId: row.id,
    operation: `video.${row.type}`,
    holdKey: jobHoldKey('video', row.id),
  });
  await reservation.commit(units);
}

/**
 * Charges completed jobs that were never charged: the process that completed one died before its charge, or the
 * charge outlasted its retries. A job counts as charged when a hold under its id is reserved or committed (the
 * hold key makes the charge itself idempotent if two replicas race here).
 */
export async function chargeUnchargedJobs(infra: Infra, afterMs: number): Promise<number> {
  const { rows } = await infra.db.query<VideoJobRow>(
    `select v.* from video_jobs v
      where v.status = 'completed' and v.charged_units > 0
        and v.completed_at < now() - make_interval(secs => $1::float / 1000)
        and v.completed_at > now() - interval '7 days'
        and not ${heldOrChargedSql('v.id', 'video')}
      order by v.completed_at limit 100`,
    [afterMs],
  );
  for (const row of rows) {
    await chargeJob(infra, row, row.charged_units!);
    infra.log.warn({ videoJobId: row.id }, 'completed video job charged by the reconciler');
  }
  return rows.length;
}

/** Submission pre-check: the estimate must fit the balance (reserve then release; the charge is at completion). */
export async function precheckCredits(
  infra: Infra,
  input: {
    developerId: string;
    type: VideoJobRow['type'];
    provider: string;
    billable: boolean;
    units: number;
    requestId: string;
  },
): Promise<void> {
  if (!input.billable) return;
  const r = await infra.meter.reserve({
    developerId: input.developerId,
    category: 'video',
    units: input.units,
    unit: unitOf(input.type),
    provider: input.provider,
    billable: true,
    requestId: input.requestId,
    operation: `video.${input.type}`,
  });
  await r.refund();
}
