import type { Usage } from '../../shared/contracts/billing.ts';
import { accountLimit, ensureAccount } from '../../shared/platform/metering/accounts.ts';
import { testTrafficUsage, usageByCategory, waivedByReason } from '../../shared/platform/metering/ledger-reads.ts';
import type { Infra } from '../../shared/platform/infra.ts';

/**
 * The current period's usage, read from the database (not the header cache): credits of the balance, credits by
 * category from the ledger (holds in flight count, refunds do not), and the number of distinct metered requests.
 */
export async function usageReport(infra: Infra, developerId: string): Promise<Usage> {
  const a = await ensureAccount(infra.db, infra.config, developerId);
  infra.meter.publish(a);
  const [rows, waived, testTraffic] = await Promise.all([
    usageByCategory(infra.db, developerId, a.period_start, a.period_end),
    waivedByReason(infra.db, developerId, a.period_start, a.period_end),
    testTrafficUsage(infra.db, developerId, a.period_start, a.period_end),
  ]);
  const breakdown = { tts: 0, stt: 0, llm: 0, rag: 0, video: 0, session: 0 };
  let requestCount = 0;
  for (const r of rows) {
    if (r.category === null) requestCount = r.requests;
    else breakdown[r.category] = r.credits;
  }
  const limit = accountLimit(a);
  return {
    credits: { used: a.used, limit, remaining: Math.max(0, limit - a.used) },
    breakdown,
    requestCount,
    period: { start: a.period_start.toISOString(), end: a.period_end.toISOString() },
    waived: { credits: waived.reduce((n, w) => n + w.credits, 0), byReason: waived },
    testTraffic,
  };
}
