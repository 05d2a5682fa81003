import type { Meter } from '../billing/types.ts';
import type { Infra } from '../runtime/infra.ts';
import type { VideoJobRow } from './store.ts';

/** The platform's meter when the billing area provides one (`infra.meter`). */
export function meterOf(infra: Infra): Meter | null {
  return (infra as Infra & { meter?: Meter }).meter ?? null;
}

/** Unit name per job type (the credit-weight table's `video.<type>` operations). */
export function unitOf(type: VideoJobRow['type']): string {
  return type === 'analyze' ? 'input video seconds' : 'generated video seconds';
}

/**
 * Charges a finished job once. Called only by the run that moved the row to `completed` (a conditional UPDATE),
 * so a job rerun after a crash is charged by exactly one run. Non-billable jobs (caller's own key) are recorded
 * with 0 credits by the meter. The ledger's request_id is the job id.
 */
export async function chargeJob(infra: Infra, row: VideoJobRow, units: number): Promise<void> {
  const meter = meterOf(infra);
  if (!meter || units <= 0) return;
  const reservation = await meter.reserve({
    developerId: row.owner_id,
    category: 'video',
    units,
    unit: unitOf(row.type),
    provider: row.provider,
    billable: row.billable,
    requestId: row.id,
    operation: `video.${row.type}`,
  });
  await reservation.commit(units);
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
  const meter = meterOf(infra);
  if (!meter || !input.billable) return;
  const r = await meter.reserve({
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
