import type { Config } from '../../kernel/config/index.ts';
import { isUniqueViolation, withTransaction, type Db } from '../../kernel/db/pool.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { newId } from '../../kernel/ids.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import type { Redis } from '../../kernel/redis.ts';
import { accountLimit, ensureAccount, type AccountRow } from './accounts.ts';
import { assertBillingConfig } from './settings.ts';
import { settleWithRetry } from './settle-retry.ts';
import type { Meter, MeterInput, Reservation, UsageSnapshot } from './types.ts';
import { UsageCache, type CachedUsage } from './usage-cache.ts';
import { creditWeights } from './weights.ts';

/** The Meter plus what the billing area itself needs: publishing a changed balance to every cache. */
export interface CreditMeter extends Meter {
  /** Re-reads a developer's account (rolling it over if due) and refreshes the caches. */
  refresh(developerId: string): Promise<UsageSnapshot>;
  /** Publishes a balance just read or written (e.g. after a tier change) to the caches. */
  publish(account: AccountRow): void;
  /** The in-process snapshot if fresh, without any I/O or promise (the per-request hot path); else null. */
  peek(developerId: string): UsageSnapshot | null;
  /**
   * Settles a hold left `reserved` by its ledger id (the hold sweeper): commits it to `units`, or refunds it
   * when `units` is null. False when the hold was already settled.
   */
  settle(ledgerId: string, units: number | null): Promise<boolean>;
}

interface BalanceRow {
  rev: number;
  used: number;
  credit_limit: number;
  period_end: Date;
}

/**
 * Credits ledger + balance. `reserve` is one conditional UPDATE of the account row (the hold) joined with the
 * ledger insert in the same statement: concurrent reservations serialise on the row lock, and Postgres re-checks
 * `used + credits <= limit` against the latest row version, so no interleaving spends past the limit.
 * Snapshots (the X-Usage-* headers) come from an in-process cache backed by Redis, written through on every
 * charge, so the hot path does no database query.
 */
export function createMeter(deps: { db: Db; redis: Redis; config: Config; log: Logger }): CreditMeter {
  const { db, config } = deps;
  const log = deps.log.child({ component: 'meter' });
  assertBillingConfig(config);
  const weights = creditWeights(config);
  const cache = new UsageCache(deps.redis, config.REDIS_PREFIX, config.USAGE_CACHE_MS, log);

  const toCached = (b: BalanceRow): CachedUsage => ({
    rev: b.rev,
    used: b.used,
    limit: b.credit_limit,
    periodEnd: b.period_end.getTime(),
  });
  const publishBalance = (developerId: string, b: BalanceRow | undefined): void => {
    if (b) cache.put(developerId, toCached(b));
  };

  async function tryHold(input: MeterInput, id: string, credits: number): Promise<BalanceRow | null> {
    const { rows } = await db.query<BalanceRow>(
      `with acct as (
         update credit_accounts
            set used = used + $2, rev = rev + 1, updated_at = now()
          where developer_id = $1 and period_end > now()
            and (overage_rate > 0 or used + $2 <= monthly_credits + carryover_credits)
          returning rev, used, monthly_credits + carryover_credits as credit_limit, period_start, period_end
       ), ins as (
         insert into credit_ledger (id, developer_id, period_start, category, operation, units, unit, credits,
                                    provider, billable, request_id, status, hold_key, api_key_id)
         select $3, $1, acct.period_start, $4, $5, $6, $7, $2, $8, true, $9, 'reserved', $10, $11 from acct
         returning id
       )
       select acct.rev, acct.used, acct.credit_limit, acct.period_end from acct, ins`,
      [
        input.developerId,
        credits,
        id,
        input.category,
        input.operation,
        input.units,
        input.unit,
        input.provider,
        input.requestId,
        input.holdKey ?? null,
        input.apiKeyId ?? null,
      ],
    );
    return rows[0] ?? null;
  }

  /** The hold already taken under a key (reserved or committed; a refunded one frees the key). */
  async function heldUnder(key: string): Promise<{ id: string; credits: number } | null> {
    const { rows } = await db.query<{ id: string; credits: number }>(
      `select id, credits from credit_ledger where hold_key = $1 and status <> 'refunded'`,
      [key],
    );
    return rows[0] ?? null;
  }

  /**
   * A keyed reserve returns the hold its key already has: a job that runs again (a retry, a crash and a
   * re-run on another worker) is held, and so charged, once. Two runs racing on one key meet at the unique
   * index: the loser's statement (account update included) rolls back and it takes the winner's hold.
   */
  async function reserve(raw: MeterInput): Promise<Reservation> {
    const input = { ...raw, units: cleanUnits(raw.units) };
    if (!input.holdKey) return reserveNew(input);
    const existing = await heldUnder(input.holdKey);
    if (existing) return reservation(existing.id, input, existing.credits);
    try {
      return await reserveNew(input);
    } catch (e) {
      const raced = isUniqueViolation(e, 'credit_ledger_hold_key') ? await heldUnder(input.holdKey) : null;
      if (!raced) throw e;
      return reservation(raced.id, input, raced.credits);
    }
  }

  async function reserveNew(input: MeterInput): Promise<Reservation> {
    const id = newId('ledger');
    const credits = input.billable ? weights.credits(input.category, input.operation, input.units) : 0;
    if (credits === 0) {
      await db.query(
        `insert into credit_ledger (id, developer_id, period_start, category, operation, units, unit, credits,
                                    provider, billable, request_id, status, hold_key, api_key_id)
         values ($1, $2, null, $3, $4, $5, $6, 0, $7, $8, $9, 'reserved', $10, $11)`,
        [
          id,
          input.developerId,
          input.category,
          input.operation,
          input.units,
          input.unit,
          input.provider,
          input.billable,
          input.requestId,
          input.holdKey ?? null,
          input.apiKeyId ?? null,
        ],
      );
      return reservation(id, input, 0);
    }
    let held = await tryHold(input, id, credits);
    if (!held) {
      // No row matched: the account is missing, its period ended, or the balance is short. Settle the first two
      // and try once more; what remains is a real shortage.
      const before = await ensureAccount(db, config, input.developerId);
      const short = isShort(before, credits);
      held = short ? null : await tryHold(input, id, credits);
      if (!held)
        shortOf(credits, short ? before : await ensureAccount(db, config, input.developerId).catch(() => before));
    }
    publishBalance(input.developerId, held);
    return reservation(id, input, credits);
  }

  async function check(raw: MeterInput): Promise<void> {
    const credits = raw.billable ? weights.credits(raw.category, raw.operation, cleanUnits(raw.units)) : 0;
    if (credits === 0) return;
    const account = await ensureAccount(db, config, raw.developerId);
    if (isShort(account, credits)) shortOf(credits, account);
  }

  /** Hard-limit tiers stop at their limit; a tier with an overage rate runs past it. */
  function isShort(account: AccountRow, credits: number): boolean {
    return !(account.overage_rate > 0) && account.used + credits > accountLimit(account);
  }

  function shortOf(credits: number, account: AccountRow): never {
    publish(account);
    const remaining = Math.max(0, accountLimit(account) - account.used);
    throw new ApiError('insufficient_credits', { needed: credits, remaining });
  }

  /**
   * A hold's settlement. `settled` is set only once the UPDATE succeeded, so a refund that failed can be tried
   * again; the statements themselves only act on a row still `reserved`, so settling twice changes nothing.
   */
  function reservation(id: string, input: MeterInput, heldAtStart: number): Reservation {
    let settled = false;
    let held = heldAtStart;
    let heldUnits = input.units;
    return {
      get credits() {
        return held;
      },
      async extendTo(units: number) {
        if (settled) throw new Error(`hold ${id} is already settled`);
        const total = cleanUnits(units);
        if (total <= heldUnits) return;
        held = await growHold(id, { ...input, units: total }, held);
        heldUnits = total;
      },
      async commit(actualUnits?: number, opts?: { waivedReason?: string }) {
        if (settled) return;
        const balance = await settleWithRetry('commit', id, log, () =>
          commitHold(id, { ...input, units: heldUnits }, held, actualUnits, opts?.waivedReason),
        );
        settled = true;
        publishBalance(input.developerId, balance);
      },
      async refund() {
        if (settled) return;
        try {
          const balance = await settleWithRetry('refund', id, log, () => refundHold(id, input.developerId));
          settled = true;
          publishBalance(input.developerId, balance);
        } catch {
          // Logged by settleWithRetry; the hold stays `reserved` and the hold sweeper returns it.
        }
      },
    };
  }

  /**
   * Grows a reserved hold to `input.units` (the work goes on and will use more): the same conditional update of the
   * account row as a new hold, and the ledger row's units and credits in the same statement, so a running hold
   * never spends past a hard limit either. Returns the hold's new credits; throws `insufficient_credits`.
   */
  async function growHold(id: string, input: MeterInput, held: number): Promise<number> {
    const credits = input.billable ? weights.credits(input.category, input.operation, input.units) : 0;
    const delta = credits - held;
    const attempt = async (): Promise<boolean> => {
      const { rows } = await db.query<BalanceRow & { id: string }>(
        `with l as (
           select id from credit_ledger where id = $3 and status = 'reserved' for update
         ), acct as (
           update credit_accounts
              set used = used + $2, rev = rev + case when $2 = 0 then 0 else 1 end, updated_at = now()
            where developer_id = $1 and period_end > now() and exists (select 1 from l)
              and ($2 = 0 or overage_rate > 0 or used + $2 <= monthly_credits + carryover_credits)
            returning rev, used, monthly_credits + carryover_credits as credit_limit, period_start, period_end
         ), upd as (
           update credit_ledger
              set credits = credits + $2, units = $4,
                  period_start = coalesce(period_start, (select period_start from acct))
            where id = $3 and exists (select 1 from acct)
            returning id
         )
         select upd.id, acct.rev, acct.used, acct.credit_limit, acct.period_end from acct, upd`,
        [input.developerId, delta, id, input.units],
      );
      if (rows[0] && delta !== 0) publishBalance(input.developerId, rows[0]);
      return rows.length > 0;
    };
    if (await attempt()) return credits;
    const { rows } = await db.query<{ status: string }>('select status from credit_ledger where id = $1', [id]);
    if (rows[0]?.status !== 'reserved') throw new Error(`hold ${id} is no longer reserved`);
    // As in reserveNew: a missing account or an ended period is settled and tried once more; the rest is a shortage.
    const before = await ensureAccount(db, config, input.developerId);
    if (isShort(before, delta)) shortOf(delta, before);
    if (await attempt()) return credits;
    return shortOf(delta, await ensureAccount(db, config, input.developerId));
  }

  async function refundHold(id: string, developerId: string): Promise<BalanceRow | undefined> {
    const { rows } = await db.query<BalanceRow>(
      `with l as (
         update credit_ledger set status = 'refunded', settled_at = now()
          where id = $1 and status = 'reserved'
          returning credits
       )
       update credit_accounts a
          set used = greatest(0, a.used - l.credits), rev = a.rev + 1, updated_at = now()
         from l
        where a.developer_id = $2 and l.credits > 0
        returning a.rev, a.used, a.monthly_credits + a.carryover_credits as credit_limit, a.period_end`,
      [id, developerId],
    );
    return rows[0];
  }

  /** Settles a hold by its ledger id (the hold sweeper): commit to `units`, or refund when units is null. */
  async function settle(ledgerId: string, units: number | null): Promise<boolean> {
    const { rows } = await db.query<MeterInput & { credits: number }>(
      `select developer_id as "developerId", category, operation, units::float8 as units, unit, provider, billable,
              request_id as "requestId", credits
         from credit_ledger where id = $1 and status = 'reserved'`,
      [ledgerId],
    );
    const row = rows[0];
    if (!row) return false;
    const balance = await settleWithRetry(units === null ? 'refund' : 'commit', ledgerId, log, () =>
      units === null ? refundHold(ledgerId, row.developerId) : commitHold(ledgerId, row, row.credits, units),
    );
    publishBalance(row.developerId, balance);
    return true;
  }

  /**
   * Settles a hold to the actual units. Less than held: the difference goes back. More: the difference is
   * charged, on a hard-limit tier only as far as the balance goes (the rest is recorded as waived, never as a
   * negative balance: the work is already done and the hold was the pre-check).
   */
  async function commitHold(
    id: string,
    input: MeterInput,
    held: number,
    actualUnits: number | undefined,
    waivedReason = 'balance',
  ): Promise<BalanceRow | undefined> {
    const units = actualUnits === undefined ? input.units : cleanUnits(actualUnits);
    const actual = input.billable ? weights.credits(input.category, input.operation, units) : 0;
    const delta = actual - held;
    // A charge past the hold (e.g. a 0-unit reserve settled at the end of a session) needs the account of the
    // current period to exist: create or roll it first.
    if (delta > 0) await ensureAccount(db, config, input.developerId);
    return withTransaction(db, async (tx) => {
      const { rows: ledger } = await tx.query<{ status: string }>(
        'select status from credit_ledger where id = $1 for update',
        [id],
      );
      if (ledger[0]?.status !== 'reserved') return undefined;
      let applied = 0;
      let balance: BalanceRow | undefined;
      if (delta !== 0) {
        const { rows } = await tx.query<{ used: number; credit_limit: number; overage_rate: number }>(
          `select used, monthly_credits + carryover_credits as credit_limit, overage_rate
             from credit_accounts where developer_id = $1 for update`,
          [input.developerId],
        );
        const a = rows[0];
        if (a) {
          applied =
            delta < 0
              ? Math.max(delta, -a.used)
              : a.overage_rate > 0
                ? delta
                : Math.min(delta, Math.max(0, a.credit_limit - a.used));
          if (applied !== 0) {
            const upd = await tx.query<BalanceRow>(
              `update credit_accounts set used = used + $2, rev = rev + 1, updated_at = now()
                where developer_id = $1
                returning rev, used, monthly_credits + carryover_credits as credit_limit, period_end`,
              [input.developerId, applied],
            );
            balance = upd.rows[0];
          }
        }
      }
      const waived = delta > 0 ? delta - applied : 0;
      await tx.query(
        `update credit_ledger set status = 'committed', units = $2, credits = $3, credits_waived = $4,
                                  waived_reason = $5, settled_at = now()
          where id = $1`,
        [id, units, held + applied, waived, waived > 0 ? waivedReason : null],
      );
      if (waived > 0) {
        log.warn({ developerId: input.developerId, waived, reason: waivedReason }, 'usage beyond balance waived');
      }
      return balance;
    });
  }

  async function refresh(developerId: string): Promise<UsageSnapshot> {
    const a = await ensureAccount(db, config, developerId);
    publish(a);
    return toSnapshot(cache.peek(developerId) ?? cachedOf(a));
  }

  function cachedOf(a: AccountRow): CachedUsage {
    return { rev: a.rev, used: a.used, limit: accountLimit(a), periodEnd: a.period_end.getTime() };
  }

  function publish(a: AccountRow): void {
    cache.put(a.developer_id, cachedOf(a));
  }

  async function snapshot(developerId: string): Promise<UsageSnapshot> {
    const hit = cache.peek(developerId);
    if (hit) return toSnapshot(hit);
    // One load per developer at a time: a burst of requests after the local entry expires makes one Redis read.
    return cache.single(developerId, async () => {
      const shared = await cache.fetchShared(developerId);
      return shared ? toSnapshot(shared) : refresh(developerId);
    });
  }

  function peek(developerId: string): UsageSnapshot | null {
    const hit = cache.peek(developerId);
    return hit ? toSnapshot(hit) : null;
  }

  return { reserve, check, snapshot, refresh, publish, peek, settle };
}

/** Units are a measured amount: anything not a finite non-negative number counts as 0 (never a negative charge). */
function cleanUnits(units: number): number {
  return Number.isFinite(units) && units > 0 ? units : 0;
}

function toSnapshot(c: CachedUsage): UsageSnapshot {
  return { used: c.used, limit: c.limit, remaining: Math.max(0, c.limit - c.used) };
}
