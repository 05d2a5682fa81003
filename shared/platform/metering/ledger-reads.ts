import { TEST_TRAFFIC_PROVIDER_PREFIX } from '../../contracts/agent-tests.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import type { MeterCategory } from './types.ts';

/**
 * Reports over `credit_ledger` (its writes are the meter's, meter.ts). Both count what a developer used in a
 * window: holds in flight included, refunded entries excluded.
 */

/**
 * SQL predicate: a hold or charge of `category` under the request id `requestId` (an SQL expression) that was not
 * refunded. For a job table's reconciler that looks for completed work never charged (video/billing.ts).
 */
export function heldOrChargedSql(requestId: string, category: MeterCategory): string {
  return `exists (select 1 from credit_ledger l
                   where l.request_id = ${requestId} and l.category = '${category}' and l.status <> 'refunded')`;
}

/**
 * Session holds and charges (reserved or committed) taken under any of these API keys of the developer, except
 * those of the sessions `keep`: the calls an agent test run's dead attempts made (agent-tests/abandoned-calls.ts).
 */
export async function sessionLedgerOfKeys(
  db: Queryable,
  developerId: string,
  apiKeyIds: string[],
  keep: string[],
): Promise<string[]> {
  if (apiKeyIds.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `select id from credit_ledger
      where developer_id = $1 and api_key_id = any($2::text[]) and status in ('reserved', 'committed')
        and operation like 'session.%' and not (request_id = any($3::text[]))`,
    [developerId, apiKeyIds, keep],
  );
  return rows.map((r) => r.id);
}

/**
 * What one request (a voice session: its id is the request id of its minutes, STT, TTS, LLM and post-call analysis)
 * cost: the credits of its rows that were not refunded, and whether every hold is settled (none still reserved).
 */
export async function requestCost(
  db: Queryable,
  developerId: string,
  requestId: string,
): Promise<{ credits: number; settled: boolean }> {
  const { rows } = await db.query<{ credits: string | null; reserved: number }>(
    `select sum(credits) filter (where status <> 'refunded') as credits,
            count(*) filter (where status = 'reserved')::int as reserved
       from credit_ledger where developer_id = $1 and request_id = $2`,
    [developerId, requestId],
  );
  return { credits: Number(rows[0]?.credits ?? 0), settled: (rows[0]?.reserved ?? 0) === 0 };
}

/** One category's credits and distinct metered requests; the row with `category` null is the total. */
export interface CategoryUsageRow {
  category: MeterCategory | null;
  credits: number;
  requests: number;
}

/** Credits and distinct metered requests in [start, end), by category, plus a total row (category null). */
export async function usageByCategory(
  db: Queryable,
  developerId: string,
  start: Date,
  end: Date,
): Promise<CategoryUsageRow[]> {
  const { rows } = await db.query<CategoryUsageRow>(
    `select category, coalesce(sum(credits), 0)::bigint as credits, count(distinct request_id)::bigint as requests
       from credit_ledger
      where developer_id = $1 and created_at >= $2 and created_at < $3 and status <> 'refunded'
      group by grouping sets ((category), ())`,
    [developerId, start, end],
  );
  return rows;
}

/** Credits on one UTC day (`YYYY-MM-DD`) in one category. */
export interface DailyCreditsRow {
  day: string;
  category: string;
  credits: number;
}

/** Credits in [start, end) by UTC day and category; days and categories without any are absent. */
export async function dailyCreditsByCategory(
  db: Queryable,
  developerId: string,
  start: Date,
  end: Date,
): Promise<DailyCreditsRow[]> {
  const { rows } = await db.query<{ day: string; category: string; credits: string | number }>(
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, category, sum(credits)::bigint as credits
       from credit_ledger
      where developer_id = $1 and created_at >= $2 and created_at < $3 and status <> 'refunded'
      group by 1, 2`,
    [developerId, start, end],
  );
  return rows.map((r) => ({ day: r.day, category: r.category, credits: Number(r.credits) }));
}

/**
 * Credits spent since `since` (holds in flight included, refunds excluded) by a developer, or by one of their API
 * keys: what a daily spending cap counts.
 */
export async function creditsSince(
  db: Queryable,
  developerId: string,
  since: Date,
  apiKeyId?: string | null,
): Promise<number> {
  const { rows } = await db.query<{ credits: string | number }>(
    `select coalesce(sum(credits), 0)::bigint as credits
       from credit_ledger
      where developer_id = $1 and created_at >= $2 and status <> 'refunded'
        and ($3::text is null or api_key_id = $3)`,
    [developerId, since, apiKeyId ?? null],
  );
  return Number(rows[0]?.credits ?? 0);
}

/** Credits of actual usage waived in [start, end), by reason (what GET /v1/usage shows beside the breakdown). */
export async function waivedByReason(
  db: Queryable,
  developerId: string,
  start: Date,
  end: Date,
): Promise<Array<{ reason: string; credits: number }>> {
  const { rows } = await db.query<{ reason: string; credits: string | number }>(
    `select coalesce(waived_reason, 'balance') as reason, sum(credits_waived)::bigint as credits
       from credit_ledger
      where developer_id = $1 and created_at >= $2 and created_at < $3 and credits_waived > 0
      group by 1 order by 1`,
    [developerId, start, end],
  );
  return rows.map((r) => ({ reason: r.reason, credits: Number(r.credits) }));
}

/**
 * Agent-test calls in [start, end): the sessions whose ledger items carry the test-traffic provider prefix, and the
 * credits they were charged (0 for offline runs). GET /v1/usage shows them apart from the breakdown.
 */
export async function testTrafficUsage(
  db: Queryable,
  developerId: string,
  start: Date,
  end: Date,
): Promise<{ sessions: number; credits: number }> {
  const { rows } = await db.query<{ sessions: string | number; credits: string | number }>(
    `select count(distinct request_id)::bigint as sessions, coalesce(sum(credits), 0)::bigint as credits
       from credit_ledger
      where developer_id = $1 and created_at >= $2 and created_at < $3 and status <> 'refunded'
        and starts_with(provider, $4)`,
    [developerId, start, end, TEST_TRAFFIC_PROVIDER_PREFIX],
  );
  return { sessions: Number(rows[0]?.sessions ?? 0), credits: Number(rows[0]?.credits ?? 0) };
}
