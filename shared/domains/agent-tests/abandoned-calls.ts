import { keyIdsNamed, revokeKey } from '../../kernel/db/api-keys.ts';
import { sessionLedgerOfKeys } from '../../platform/metering/ledger-reads.ts';
import type { Infra } from '../../platform/infra.ts';
import type { TestRunRow } from './store.ts';

/** The name of the short-lived key an attempt of a run makes its calls with (one per attempt). */
export const runKeyName = (runId: string) => `agent-tests ${runId}`;

/**
 * A run is charged what its results say. A call whose attempt died (the worker killed, the job stalled, drained
 * mid-scenario) has no stored result, and the next attempt plays its scenario again: its holds stayed reserved
 * (nobody is left to settle them) or were charged, and the developer paid twice (278 credits for a scenario whose
 * result said 26). Once the run is over, every session hold or charge made with one of the run's keys whose session
 * is not one of its results' is refunded, and keys a dead attempt left are revoked. Idempotent: a refunded entry is
 * not counted again.
 */
export async function refundAbandonedCalls(infra: Infra, run: TestRunRow): Promise<number> {
  const keys = await keyIdsNamed(infra.db, run.developer_id, runKeyName(run.id));
  const kept = run.results.flatMap((r) => (r?.sessionId ? [r.sessionId] : []));
  let refunded = 0;
  for (const id of await sessionLedgerOfKeys(infra.db, run.developer_id, keys, kept)) {
    if (await infra.meter.cancel(id)) refunded++;
  }
  for (const key of keys) await revokeKey(infra.db, run.developer_id, key, 'revoked');
  if (refunded > 0) infra.log.warn({ agentTestRun: run.id, refunded }, 'calls of a dead attempt refunded');
  return refunded;
}
