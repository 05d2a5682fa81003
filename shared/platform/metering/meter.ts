import type { Config } from '../../kernel/config/index.ts';
import { isUniqueViolation, type Db } from '../../kernel/db/pool.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { newId } from '../../kernel/ids.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import type { Redis } from '../../kernel/redis.ts';
import { accountLimit, ensureAccount, type AccountRow } from './accounts.ts';
import { assertBillingConfig } from './settings.ts';
import { settleWithRetry } from './settle-retry.ts';
import type { HoldItem, Meter, MeterInput, Reservation, UsageSnapshot } from './types.ts';
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
  /**
   * Returns a hold or a charge (reserved or committed) to the balance, as refunded: work the platform lost and did
   * again at its own initiative (an agent test call whose worker died before its result was stored). False when it
   * was refunded already.
   */
  cancel(ledgerId: string): Promise<boolean>;
}

/** A hold as `holdAll` reads and updates it. */
interface HoldState {
  id: string;
  input: MeterInput;
  held: number;
  heldUnits: number;
  settled: boolean;
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
  /** Each open hold's state, so that `holdAll` can grow several holds in one statement. */
  const holds = new WeakMap<Reservation, HoldState>();

  function reservation(id: string, input: MeterInput, heldAtStart: number): Reservation {
    const st: HoldState = { id, input, held: heldAtStart, heldUnits: input.units, settled: false };
    const r: Reservation = {
      get credits() {
        return st.held;
      },
      async extendTo(units: number) {
        if (st.settled) throw new Error(`hold ${id} is already settled`);
        const total = cleanUnits(units);
        if (total <= st.heldUnits) return;
        st.held = await growHold(id, { ...input, units: total }, st.held);
        st.heldUnits = total;
      },
      async commit(actualUnits?: number, opts?: { waivedReason?: string }) {
        if (st.settled) return;
        const balance = await settleWithRetry('commit', id, log, () =>
          commitHold(id, { ...input, units: st.heldUnits }, st.held, actualUnits, opts?.waivedReason),
        );
        st.settled = true;
        publishBalance(input.developerId, balance);
      },
      async refund() {
        if (st.settled) return;
        try {
          const balance = await settleWithRetry('refund', id, log, () => refundHold(id, input.developerId));
          st.settled = true;
          publishBalance(input.developerId, balance);
        } catch {
          // Logged by settleWithRetry; the hold stays `reserved` and the hold sweeper returns it.
        }
      },
    };
    holds.set(r, st);
    return r;
  }

  /**
   * Opens and grows several holds of one developer in one statement, all or none (see Meter.holdAll). Four holds
   * grown one by one met four times on the account row's lock, and 300 calls of one developer replying at once
   * queued there.
   */
  async function holdAll(items: HoldItem[]): Promise<Reservation[]> {
    if (items.length === 0) return [];
    const developerId = items[0]!.input.developerId;
    const plan = items.map(({ hold, input }) => {
      if (input.developerId !== developerId) throw new Error('holdAll takes the holds of one developer');
      if (input.holdKey) throw new Error('holdAll does not open keyed holds (reserve them one at a time)');
      const st = hold ? holds.get(hold) : undefined;
      if (hold && !st) throw new Error('holdAll was given a hold of another meter');
      if (st?.settled) throw new Error(`hold ${st.id} is already settled`);
      const units = Math.max(cleanUnits(input.units), st?.heldUnits ?? 0);
      const credits = input.billable ? weights.credits(input.category, input.operation, units) : 0;
      return {
        st,
        input: { ...input, units },
        id: st?.id ?? newId('ledger'),
        credits,
        delta: credits - (st?.held ?? 0),
      };
    });
    const grow = plan.filter((p) => p.st && p.input.units > p.st.heldUnits);
    const open = plan.filter((p) => !p.st);
    const total = [...grow, ...open].reduce((n, p) => n + p.delta, 0);
    if (grow.length + open.length === 0) return items.map((i) => i.hold!);
    const attempt = async (): Promise<boolean> => {
      const { rows } = await db.query<Partial<BalanceRow> & { ok: boolean }>(
        `with l as (
           select id from credit_ledger where id = any($2::text[]) and status = 'reserved' for update
         ), acct as (
           update credit_accounts set used = used + $3, rev = rev + 1, updated_at = now()
            where developer_id = $1 and period_end > now() and $3::bigint <> 0
              and (select count(*) from l) = cardinality($2::text[])
              and (overage_rate > 0 or used + $3 <= monthly_credits + carryover_credits)
            returning rev, used, monthly_credits + carryover_credits as credit_limit, period_start, period_end
         ), ok as (
           select exists (select 1 from acct)
                  or ($3::bigint = 0 and (select count(*) from l) = cardinality($2::text[])) as ok
         ), grown as (
           update credit_ledger c
              set units = g.units, credits = c.credits + g.delta,
                  period_start = coalesce(c.period_start, (select period_start from acct))
             from unnest($2::text[], $4::numeric[], $5::bigint[]) as g(id, units, delta)
            where c.id = g.id and (select ok from ok)
            returning c.id
         ), opened as (
           insert into credit_ledger (id, developer_id, period_start, category, operation, units, unit, credits,
                                      provider, billable, request_id, status, api_key_id)
           select g.id, $1, (select period_start from acct), g.category, g.operation, g.units, g.unit, g.credits,
                  g.provider, g.billable, g.request_id, 'reserved', g.api_key_id
             from unnest($6::text[], $7::text[], $8::text[], $9::numeric[], $10::text[], $11::bigint[], $12::text[],
                         $13::bool[], $14::text[], $15::text[])
                  as g(id, category, operation, units, unit, credits, provider, billable, request_id, api_key_id)
            where (select ok from ok)
            returning id
         )
         select (select ok from ok) as ok, (select count(*) from grown) + (select count(*) from opened) as n,
                acct.rev, acct.used, acct.credit_limit, acct.period_end
           from (select 1) one left join acct on true`,
        [
          developerId,
          grow.map((p) => p.id),
          total,
          grow.map((p) => p.input.units),
          grow.map((p) => p.delta),
          open.map((p) => p.id),
          open.map((p) => p.input.category),
          open.map((p) => p.input.operation),
          open.map((p) => p.input.units),
          open.map((p) => p.input.unit),
          open.map((p) => p.credits),
          open.map((p) => p.input.provider),
          open.map((p) => p.input.billable),
          open.map((p) => p.input.requestId),
          open.map((p) => p.input.apiKeyId ?? null),
        ],
      );
      const row = rows[0];
      if (!row?.ok) return false;
      if (row.rev !== null && row.rev !== undefined) publishBalance(developerId, row as BalanceRow);
      return true;
    };
    if (!(await attempt())) {
      const { rows } = await db.query<{ n: number }>(
        `select count(*)::int as n from credit_ledger where id = any($1::text[]) and status = 'reserved'`,
        [grow.map((p) => p.id)],
      );
      if (rows[0]?.n !== grow.length) throw new Error('a hold to grow is no longer reserved');
      // As in reserveNew: a missing account or an ended period is settled and tried once more; the rest is a shortage.
      const before = await ensureAccount(db, config, developerId);
      if (isShort(before, total)) shortOf(total, before);
      if (!(await attempt())) shortOf(total, await ensureAccount(db, config, developerId));
    }
    return plan.map((p) => {
      if (!p.st) return reservation(p.id, p.input, p.credits);
      p.st.held = p.credits;
      p.st.heldUnits = p.input.units;
      return items[plan.indexOf(p)]!.hold!;
    });
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

  async function refundHold(
    id: string,
    developerId: string,
    from: readonly string[] = ['reserved'],
  ): Promise<BalanceRow | undefined> {
    const { rows } = await db.query<BalanceRow>(
      `with l as (
         update credit_ledger set status = 'refunded', settled_at = now()
          where id = $1 and status = any($3::text[])
          returning credits
       )
       update credit_accounts a
          set used = greatest(0, a.used - l.credits), rev = a.rev + 1, updated_at = now()
         from l
        where a.developer_id = $2 and l.credits > 0
        returning a.rev, a.used, a.monthly_credits + a.carryover_credits as credit_limit, a.period_end`,
      [id, developerId, from],
    );
    return rows[0];
  }

  async function cancel(ledgerId: string): Promise<boolean> {
    const { rows } = await db.query<{ developer_id: string }>(
      `select developer_id from credit_ledger where id = $1 and status in ('reserved', 'committed')`,
      [ledgerId],
    );
    const developerId = rows[0]?.developer_id;
    if (!developerId) return false;
    const balance = await settleWithRetry('refund', ledgerId, log, () =>
      refundHold(ledgerId, developerId, ['reserved', 'committed']),
    );
    publishBalance(developerId, balance);
    return true;
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
   *
   * One statement, not a transaction of several: the account row is locked only while Postgres runs it. Held
   * across round trips to a busy Node process, that lock made every other hold of the developer wait behind the
   * event loop (300 calls of one developer ending and replying at once).
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
    const { rows } = await db.query<Partial<BalanceRow> & { waived: number }>(
      `with l as (
         select id from credit_ledger where id = $1 and status = 'reserved' for update
       ), a as (
         select used, monthly_credits + carryover_credits as lim, overage_rate from credit_accounts
          where developer_id = $2 and $3::bigint <> 0 and exists (select 1 from l) for update
       ), amt as (
         select coalesce((select case when $3::bigint < 0 then greatest($3::bigint, -used)
                                      when overage_rate > 0 then $3::bigint
                                      else least($3::bigint, greatest(0, lim - used)) end from a), 0) as applied
       ), acct as (
         update credit_accounts c set used = c.used + amt.applied, rev = c.rev + 1, updated_at = now()
           from amt where c.developer_id = $2 and amt.applied <> 0 and exists (select 1 from l)
         returning c.rev, c.used, c.monthly_credits + c.carryover_credits as credit_limit, c.period_end
       ), upd as (
         update credit_ledger set status = 'committed', units = $4, credits = $5::bigint + amt.applied,
                credits_waived = greatest(0, $3::bigint) - greatest(0, amt.applied),
                waived_reason = case when $3::bigint > amt.applied and $3::bigint > 0 then $6 end,
                settled_at = now()
           from amt where id = (select id from l)
         returning credits_waived as waived
       )
       select upd.waived, acct.rev, acct.used, acct.credit_limit, acct.period_end
         from upd left join acct on true`,
      [id, input.developerId, delta, units, held, waivedReason],
    );
    const row = rows[0];
    if (!row) return undefined;
    const waived = Number(row.waived);
    if (waived > 0)
      log.warn({ developerId: input.developerId, waived, reason: waivedReason }, 'usage beyond balance waived');
    return row.rev === null || row.rev === undefined ? undefined : (row as BalanceRow);
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

  return { reserve, holdAll, check, snapshot, refresh, publish, peek, settle, cancel };
}

/** Units are a measured amount: anything not a finite non-negative number counts as 0 (never a negative charge). */
function cleanUnits(units: number): number {
  return Number.isFinite(units) && units > 0 ? units : 0;
}

function toSnapshot(c: CachedUsage): UsageSnapshot {
  return { used: c.used, limit: c.limit, remaining: Math.max(0, c.limit - c.used) };
}
