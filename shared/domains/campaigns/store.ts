import type { SessionEndReason } from '../../contracts/sessions.ts';
import type { Db, Queryable } from '../../kernel/db/pool.ts';
import { withTransaction } from '../../kernel/db/pool.ts';
import { newId } from '../../kernel/ids.ts';
import { sessionMinuteHeldSql } from '../billing/session-hold.ts';
import { activeSessionCountSql, labelSessionKind, sessionOutcomeSql } from '../realtime/sessions.ts';
import { CAMPAIGN_CANCELED_REASON } from './outcome.ts';

/**
 * Every statement on the campaign tables (campaigns, campaign_recipients, campaign_calls). The api (create, read,
 * pause/resume/cancel, Twilio callbacks), the CPU worker (dispatcher, dialler, settlement, reconciler) and the
 * realtime role (a call's variables) go through here.
 */

export interface CampaignRow {
  id: string;
  developer_id: string;
  agent_id: string;
  name: string | null;
  from_number: string;
  status: 'active' | 'paused' | 'canceled' | 'completed';
  max_concurrency: number;
  hours_start: string;
  hours_end: string;
  time_zone: string;
  retry_max_attempts: number;
  retry_backoff_seconds: number;
  retry_on: string[];
  max_duration_seconds: number | null;
  max_credits: string | null;
  webhook_url: string | null;
  created_at: Date;
  completed_at: Date | null;
  /** Why no call is placed now (money, issue #33), null while dialling. */
  waiting: 'daily_cap' | 'balance' | null;
  api_key_id: string | null;
}

export interface NewCampaign {
  developerId: string;
  agentId: string;
  name: string | null;
  from: string;
  maxConcurrency: number;
  hours: { start: string; end: string };
  timeZone: string;
  retry: { maxAttempts: number; backoff: number; on: string[] };
  maxDurationSeconds: number | null;
  maxCredits: number | null;
  webhookUrl: string | null;
  apiKeyId: string | null;
  recipients: Array<{ phone: string; variables: Record<string, unknown>; timeZone: string | null }>;
}

export async function insertCampaign(db: Db, c: NewCampaign): Promise<string> {
  const id = newId('campaign');
  await withTransaction(db, async (tx) => {
    await tx.query(
      `insert into campaigns (id, developer_id, agent_id, name, from_number, max_concurrency, hours_start, hours_end,
         time_zone, retry_max_attempts, retry_backoff_seconds, retry_on, max_duration_seconds, max_credits, webhook_url,
         api_key_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [
        id,
        c.developerId,
        c.agentId,
        c.name,
        c.from,
        c.maxConcurrency,
        c.hours.start,
        c.hours.end,
        c.timeZone,
        c.retry.maxAttempts,
        c.retry.backoff,
        c.retry.on,
        c.maxDurationSeconds,
        c.maxCredits,
        c.webhookUrl,
        c.apiKeyId,
      ],
    );
    // One statement for the whole list (unnest keeps it a single round trip for thousands of recipients).
    await tx.query(
      `insert into campaign_recipients (id, campaign_id, idx, phone, variables, time_zone)
       select r.id, $1, r.idx, r.phone, r.variables, r.tz
         from unnest($2::text[], $3::int[], $4::text[], $5::jsonb[], $6::text[]) as r(id, idx, phone, variables, tz)`,
      [
        id,
        c.recipients.map(() => newId('recipient')),
        c.recipients.map((_, i) => i),
        c.recipients.map((r) => r.phone),
        c.recipients.map((r) => JSON.stringify(r.variables)),
        c.recipients.map((r) => r.timeZone),
      ],
    );
  });
  return id;
}

const CAMPAIGN_COLS = `id, developer_id, agent_id, name, from_number, status, max_concurrency, hours_start, hours_end,
  time_zone, retry_max_attempts, retry_backoff_seconds, retry_on, max_duration_seconds, max_credits, webhook_url,
  created_at, completed_at, waiting, api_key_id`;

export async function getCampaign(db: Queryable, developerId: string, id: string): Promise<CampaignRow | null> {
  const { rows } = await db.query<CampaignRow>(
    `select ${CAMPAIGN_COLS} from campaigns where id = $1 and developer_id = $2`,
    [id, developerId],
  );
  return rows[0] ?? null;
}

/** What the dispatcher needs of a campaign (null: no such campaign). */
export type DispatchCampaign = Pick<
  CampaignRow,
  'id' | 'developer_id' | 'agent_id' | 'api_key_id' | 'max_credits' | 'webhook_url' | 'waiting' | 'status'
>;

export async function campaignForDispatch(db: Queryable, id: string): Promise<DispatchCampaign | null> {
  const { rows } = await db.query<DispatchCampaign>(
    `select id, developer_id, agent_id, api_key_id, max_credits, webhook_url, waiting, status
       from campaigns where id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/**
 * Sets (a reason) or clears (null) why an active campaign waits. Returns when a new pause began (it was not
 * waiting before), so the caller sends one `campaign.paused` per pause; a reason that changes keeps the pause.
 */
export async function setCampaignWaiting(
  db: Queryable,
  id: string,
  waiting: 'daily_cap' | 'balance' | null,
): Promise<{ pausedAt: Date } | null> {
  const { rows } = await db.query<{ was: string | null; since: Date | null }>(
    `with old as (select waiting from campaigns where id = $1 for update)
     update campaigns c set waiting = $2,
       waiting_since = case when $2::text is null then null when old.waiting is null then now() else c.waiting_since end
      from old where c.id = $1 and c.waiting is distinct from $2::text and ($2::text is null or c.status = 'active')
     returning old.waiting as was, c.waiting_since as since`,
    [id, waiting],
  );
  const r = rows[0];
  return r && r.was === null && r.since ? { pausedAt: r.since } : null;
}

/**
 * The developer's campaign attempts not ended whose session holds no first minute yet (claimed, dialling, ringing,
 * answered before the stream, and a started session before its hold commits): each will reserve that minute, so the
 * money check counts it as spent. Once the hold is in the ledger the daily cap and the balance count it instead, so
 * an attempt is always in one of the two; by the session's state it could be in neither (the session marked active,
 * its hold not yet written), which let a campaign with money for one call dial two under load.
 */
export async function attemptsAwaitingHold(db: Queryable, developerId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::int as n from campaign_calls k join campaigns c on c.id = k.campaign_id
      where c.developer_id = $1 and k.ended_at is null
        and not ${sessionMinuteHeldSql('k.session_id')}`,
    [developerId],
  );
  return rows[0]?.n ?? 0;
}

/** Newest first, one extra row for paging. */
export async function listCampaigns(
  db: Queryable,
  developerId: string,
  q: { after: string | null; limit: number },
): Promise<CampaignRow[]> {
  const { rows } = await db.query<CampaignRow>(
    `select ${CAMPAIGN_COLS} from campaigns where developer_id = $1 and ($2::text is null or id < $2)
      order by id desc limit $3`,
    [developerId, q.after, q.limit + 1],
  );
  return rows;
}

export interface CampaignCounts {
  total: number;
  pending: number;
  calling: number;
  done: number;
  outcomes: Record<string, number>;
}

export async function campaignCounts(db: Queryable, ids: string[]): Promise<Map<string, CampaignCounts>> {
  const { rows } = await db.query<{ campaign_id: string; state: string; outcome: string | null; n: number }>(
    `select campaign_id, state, outcome, count(*)::int as n from campaign_recipients
      where campaign_id = any($1) group by campaign_id, state, outcome`,
    [ids],
  );
  const out = new Map<string, CampaignCounts>();
  for (const id of ids) out.set(id, { total: 0, pending: 0, calling: 0, done: 0, outcomes: {} });
  for (const r of rows) {
    const c = out.get(r.campaign_id)!;
    c.total += r.n;
    c[r.state as 'pending' | 'calling' | 'done'] += r.n;
    if (r.outcome) c.outcomes[r.outcome] = (c.outcomes[r.outcome] ?? 0) + r.n;
  }
  return out;
}

export interface RecipientRow {
  id: string;
  phone: string;
  variables: Record<string, unknown>;
  time_zone: string | null;
  state: 'pending' | 'calling' | 'done';
  outcome: string | null;
  outcome_reason: string | null;
  next_attempt_at: Date;
}

export interface CallRow {
  id: string;
  recipient_id: string;
  attempt: number;
  status: string;
  call_sid: string | null;
  session_id: string | null;
  answered_by: string | null;
  outcome: string | null;
  error: string | null;
  claimed_at: Date;
  ended_at: Date | null;
  /** How the attempt's session ended (its owner's subquery), null until it has. */
  end_reason: SessionEndReason | null;
}

export async function listRecipients(
  db: Queryable,
  campaignId: string,
): Promise<{ recipients: RecipientRow[]; calls: CallRow[] }> {
  const [r, c] = await Promise.all([
    db.query<RecipientRow>(
      `select id, phone, variables, time_zone, state, outcome, outcome_reason, next_attempt_at
         from campaign_recipients where campaign_id = $1 order by idx`,
      [campaignId],
    ),
    db.query<CallRow>(
      `select k.id, k.recipient_id, k.attempt, k.status, k.call_sid, k.session_id, k.answered_by, k.outcome, k.error,
              k.claimed_at, k.ended_at, s.end_reason
         from campaign_calls k left join lateral (${sessionOutcomeSql('k.session_id')}) s on true
        where k.campaign_id = $1 order by k.recipient_id, k.attempt`,
      [campaignId],
    ),
  ]);
  return { recipients: r.rows, calls: c.rows };
}

/**
 * Moves a campaign between states; null when it is not in one of `from`. Cancel also closes pending recipients and
 * marks every attempt not ended to be hung up (in the same transaction, so a dial that returns after it sees the
 * mark: recordDialed): returns the attempts that already have a CallSid, whose hang-up the caller enqueues. A call
 * whose session handed it to a person (`transferred`) is left alone: the agent is no longer on it.
 */
export async function setCampaignStatus(
  db: Db,
  developerId: string,
  id: string,
  from: CampaignRow['status'][],
  to: CampaignRow['status'],
): Promise<{ hangUp: string[] } | null> {
  return withTransaction(db, async (tx) => {
    const r = await tx.query(
      `update campaigns set status = $4, updated_at = now(),
         completed_at = case when $4 in ('canceled', 'completed') then now() else completed_at end
       where id = $1 and developer_id = $2 and status = any($3)`,
      [id, developerId, from, to],
    );
    if (r.rowCount !== 1) return null;
    if (to !== 'canceled') return { hangUp: [] };
    await tx.query(
      `update campaign_recipients set state = 'done', outcome = 'canceled', outcome_reason = 'campaign canceled',
         updated_at = now() where campaign_id = $1 and state = 'pending'`,
      [id],
    );
    const { rows } = await tx.query<{ id: string; call_sid: string | null }>(
      `update campaign_calls k set hangup_reason = $2, hangup_requested_at = now()
        where k.campaign_id = $1 and k.ended_at is null and k.hangup_reason is null
          and not exists (select 1 from (${sessionOutcomeSql('k.session_id')}) s where s.end_reason = 'transferred')
        returning k.id, k.call_sid`,
      [id, CAMPAIGN_CANCELED_REASON],
    );
    return { hangUp: rows.filter((x) => x.call_sid).map((x) => x.id) };
  });
}

/** What bounds a claim: the fleet's free slots (null: unknown) and the developer's cap on running sessions. */
export interface ClaimLimits {
  fleetFree?: number | null;
  developerCap?: number;
  /**
   * New calls the developer's money funds (balance, daily caps, less the attempts already placed), read under the
   * developer's claim lock: read before it, a concurrent claim's call could be funded twice.
   */
  fundable?: (tx: Queryable) => Promise<number>;
}

/** A claim: the attempts to dial, and what stopped it claiming more (`developer`: their session cap is full). */
export interface Claim {
  ids: string[];
  limitedBy: 'campaign' | 'developer' | 'fleet' | 'funds' | null;
}

/**
 * The dispatcher's claim, in one transaction: the campaign row is locked (claimers of one campaign queue up, so
 * the concurrency limit holds across workers), then the developer (a transaction advisory lock: their campaigns
 * claim one at a time, so the session cap holds across campaigns). Free slots = the least of maxConcurrency −
 * recipients being called, the developer's cap − their sessions running − their attempts in flight that have no
 * running session yet (dialled, ringing, answered before the stream), and the fleet's free slots; that many due
 * recipients inside their calling hours move to `calling` with a new attempt row. Returns the attempts to dial.
 * A crash after this commit leaves `claimed` attempts that the reconciler hands to the dialler; nothing is lost.
 */
export async function claimDueRecipients(db: Db, campaignId: string, limits: ClaimLimits = {}): Promise<Claim> {
  return withTransaction(db, async (tx) => {
    const { rows: camp } = await tx.query<{ max_concurrency: number; developer_id: string }>(
      `select max_concurrency, developer_id from campaigns where id = $1 and status = 'active' for update`,
      [campaignId],
    );
    const c = camp[0];
    if (!c) return { ids: [], limitedBy: null };
    const { rows: busy } = await tx.query<{ n: number }>(
      `select count(*)::int as n from campaign_recipients where campaign_id = $1 and state = 'calling'`,
      [campaignId],
    );
    const slots = {
      campaign: c.max_concurrency - (busy[0]?.n ?? 0),
      developer: Infinity,
      fleet: Infinity,
      funds: Infinity,
    };
    if (limits.fleetFree !== undefined && limits.fleetFree !== null) slots.fleet = limits.fleetFree;
    if (limits.developerCap !== undefined || limits.fundable !== undefined)
      await tx.query(`select pg_advisory_xact_lock(hashtext('campaign-claim:' || $1))`, [c.developer_id]);
    if (limits.developerCap !== undefined)
      slots.developer = limits.developerCap - (await developerSessionsInUse(tx, c.developer_id));
    // Under the same lock: two dispatchers that both saw money for one call claim it once between them.
    if (limits.fundable !== undefined) slots.funds = await limits.fundable(tx);
    const free = Math.min(slots.campaign, slots.developer, slots.fleet, slots.funds);
    const limitedBy = (['campaign', 'developer', 'fleet', 'funds'] as const).find((k) => slots[k] === free) ?? null;
    // Nobody due (all being called, or waiting for a retry): no slot is wanted, nothing needs a look again soon.
    if (free <= 0) return { ids: [], limitedBy: (await anyoneDue(tx, campaignId)) ? limitedBy : null };
    const { rows } = await tx.query<{ id: string; attempts: number }>(
      `with due as (
         select r.id from campaign_recipients r join campaigns c on c.id = r.campaign_id
          where r.campaign_id = $1 and r.state = 'pending' and r.next_attempt_at <= now()
            and ${IN_CALLING_HOURS}
          order by r.next_attempt_at, r.idx limit $2 for update of r skip locked)
       update campaign_recipients r set state = 'calling', attempts = r.attempts + 1, updated_at = now()
         from due where r.id = due.id returning r.id, r.attempts`,
      [campaignId, free],
    );
    if (!rows.length) return { ids: [], limitedBy: null };
    const ids = rows.map(() => newId('campaignCall'));
    await tx.query(
      `insert into campaign_calls (id, campaign_id, recipient_id, attempt)
       select x.id, $1, x.rid, x.attempt from unnest($2::text[], $3::text[], $4::int[]) as x(id, rid, attempt)`,
      [campaignId, ids, rows.map((r) => r.id), rows.map((r) => r.attempts)],
    );
    return { ids, limitedBy: rows.length < free ? null : limitedBy };
  });
}

/**
 * The developer's session slots in use as a campaign sees them: sessions running (any channel), plus attempts of
 * their campaigns not ended whose session is not running (claimed, dialling, ringing, connecting: each will want
 * a session when answered). An attempt whose session ended but whose final status has not come yet still counts,
 * briefly: the claim errs on the side of the cap.
 */
async function developerSessionsInUse(tx: Queryable, developerId: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `select (${activeSessionCountSql('$1')}) + (
       select count(*)::int from campaign_calls k join campaigns c on c.id = k.campaign_id
        where c.developer_id = $1 and k.ended_at is null
          and not exists (select 1 from (${sessionOutcomeSql('k.session_id')}) s where s.status = 'active')) as n`,
    [developerId],
  );
  return rows[0]?.n ?? 0;
}

/** Whether a recipient of the campaign is due now (pending, its retry time passed, inside its calling hours). */
async function anyoneDue(tx: Queryable, campaignId: string): Promise<boolean> {
  const { rows } = await tx.query(
    `select 1 from campaign_recipients r join campaigns c on c.id = r.campaign_id
      where r.campaign_id = $1 and r.state = 'pending' and r.next_attempt_at <= now() and ${IN_CALLING_HOURS} limit 1`,
    [campaignId],
  );
  return rows.length > 0;
}

/** The recipient's local time is inside the campaign's calling hours (an end before the start spans midnight). */
const IN_CALLING_HOURS = `(
  with t as (select (now() at time zone coalesce(r.time_zone, c.time_zone))::time as local)
  select case when c.hours_start::time <= c.hours_end::time
              then t.local >= c.hours_start::time and t.local < c.hours_end::time
              else t.local >= c.hours_start::time or t.local < c.hours_end::time end
    from t)`;

/** When the next recipient of an active campaign becomes due (null: nothing waits for a time). */
export async function nextDueAt(db: Queryable, campaignId: string): Promise<Date | null> {
  const { rows } = await db.query<{ at: Date | null }>(
    `select min(next_attempt_at) as at from campaign_recipients where campaign_id = $1 and state = 'pending'`,
    [campaignId],
  );
  return rows[0]?.at ?? null;
}

// ---- one attempt ----

export interface DialTarget {
  id: string;
  campaign_id: string;
  status: string;
  call_sid: string | null;
  claimed_at: Date;
  to_number: string;
  from_number: string;
  campaign_status: string;
  max_duration_seconds: number | null;
}

export async function getDialTarget(db: Queryable, callId: string): Promise<DialTarget | null> {
  const { rows } = await db.query<DialTarget>(
    `select k.id, k.campaign_id, k.status, k.call_sid, k.claimed_at, r.phone as to_number, c.from_number,
            c.status as campaign_status, c.max_duration_seconds
       from campaign_calls k join campaign_recipients r on r.id = k.recipient_id join campaigns c on c.id = k.campaign_id
      where k.id = $1`,
    [callId],
  );
  return rows[0] ?? null;
}

/** claimed → dialing, just before the POST to Twilio: from here on the call may exist at Twilio. */
export async function markDialing(db: Queryable, callId: string): Promise<boolean> {
  const r = await db.query(
    `update campaign_calls set status = 'dialing', dialed_at = now() where id = $1 and status = 'claimed'`,
    [callId],
  );
  return r.rowCount === 1;
}

/**
 * The CallSid Twilio gave (or that recovery found); the status moves on only from claimed/dialing. Returns the
 * attempt's hang-up reason: set when the campaign was canceled while the dial was under way (hang it up now).
 */
export async function recordDialed(
  db: Queryable,
  callId: string,
  callSid: string,
  status: string,
): Promise<string | null> {
  const { rows } = await db.query<{ hangup_reason: string | null }>(
    `update campaign_calls set call_sid = coalesce(call_sid, $2),
       status = case when status in ('claimed', 'dialing') then $3 else status end
     where id = $1 returning hangup_reason`,
    [callId, callSid, status],
  );
  return rows[0]?.hangup_reason ?? null;
}

// ---- hang-ups (campaign canceled) ----

export interface HangupTarget {
  call_sid: string | null;
  hangup_reason: string | null;
  ended_at: Date | null;
}

export async function getHangupTarget(db: Queryable, callId: string): Promise<HangupTarget | null> {
  const { rows } = await db.query<HangupTarget>(
    `select call_sid, hangup_reason, ended_at from campaign_calls where id = $1`,
    [callId],
  );
  return rows[0] ?? null;
}

/** The hang-up reached Twilio: the reconciler stops sending it (the reason stays, for the session and outcome). */
export async function markHangupSent(db: Queryable, callId: string): Promise<void> {
  await db.query(`update campaign_calls set hangup_requested_at = null where id = $1`, [callId]);
}

/** Why the platform hung this attempt up (null: it did not). The realtime role ends the session with it. */
export async function callHangupReason(db: Queryable, callId: string): Promise<string | null> {
  const { rows } = await db.query<{ hangup_reason: string | null }>(
    `select hangup_reason from campaign_calls where id = $1`,
    [callId],
  );
  return rows[0]?.hangup_reason ?? null;
}

/** Hang-ups requested more than `olderMs` ago, not yet sent, on calls not ended (their job may be lost). */
export async function unsentHangups(db: Queryable, olderMs: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from campaign_calls
      where hangup_requested_at < now() - make_interval(secs => $1::float / 1000)
        and ended_at is null and call_sid is not null
      order by hangup_requested_at limit 200`,
    [olderMs],
  );
  return rows.map((r) => r.id);
}

/** Whether a CallSid is already one of our attempts (recovery must not adopt another attempt's call). */
export async function knownCallSid(db: Queryable, callSid: string): Promise<boolean> {
  const { rows } = await db.query('select 1 from campaign_calls where call_sid = $1', [callSid]);
  return rows.length > 0;
}

export const FINAL_STATUSES = ['completed', 'busy', 'no-answer', 'failed', 'canceled'];

/**
 * A Twilio status callback: the status (a final one is kept: callbacks may arrive out of order), the CallSid,
 * the AMD answer when Twilio sent one, and the error of a failed call. Returns true when the call just ended.
 */
export async function recordCallStatus(
  db: Queryable,
  callId: string,
  u: { status: string; callSid: string | null; answeredBy: string | null; error: string | null },
): Promise<boolean> {
  const final = FINAL_STATUSES.includes(u.status);
  const { rows } = await db.query<{ ended: boolean }>(
    `update campaign_calls set
       status = case when status = any($6) then status else $2 end,
       call_sid = coalesce(call_sid, $3), answered_by = coalesce($4, answered_by), error = coalesce($5, error),
       ended_at = case when $7 and ended_at is null then now() else ended_at end
     where id = $1
     returning (ended_at is not null and $7) as ended`,
    [callId, u.status, u.callSid, u.answeredBy, u.error, FINAL_STATUSES, final],
  );
  return rows[0]?.ended ?? false;
}

export interface ConnectTarget {
  id: string;
  developer_id: string;
  agent_id: string;
  from_number: string;
  to_number: string;
  max_duration_seconds: number | null;
  max_credits: string | null;
  /** The campaign's webhook address: its calls' own events (call.analyzed) go there too. */
  webhook_url: string | null;
  /** The session an earlier connect callback of this attempt opened (a replay answers it again). */
  session_id: string | null;
  call_sid: string | null;
  requeue_reason: string | null;
}

export async function getConnectTarget(db: Queryable, callId: string): Promise<ConnectTarget | null> {
  const { rows } = await db.query<ConnectTarget>(
    `select k.id, c.developer_id, c.agent_id, c.from_number, r.phone as to_number, c.max_duration_seconds,
            c.max_credits, c.webhook_url, k.session_id, k.call_sid, k.requeue_reason
       from campaign_calls k join campaign_recipients r on r.id = k.recipient_id join campaigns c on c.id = k.campaign_id
      where k.id = $1`,
    [callId],
  );
  return rows[0] ?? null;
}

/**
 * The connect callback's session for an attempt, set once: false when another callback (a replay, or Twilio's
 * retry) attached one first, so one call never opens two sessions.
 */
export async function attachCallSession(
  db: Queryable,
  callId: string,
  u: { sessionId: string; callSid: string | null },
): Promise<boolean> {
  const r = await db.query(
    `update campaign_calls set session_id = $2, call_sid = coalesce(call_sid, $3)
      where id = $1 and session_id is null`,
    [callId, u.sessionId, u.callSid],
  );
  if (r.rowCount !== 1) return false;
  await labelSessionKind(db, u.sessionId, 'campaign');
  return true;
}

/** The recipient's variables of a campaign call (the realtime role fills the prompt and first message with them). */
export async function callVariables(db: Queryable, callId: string): Promise<Record<string, unknown> | null> {
  const { rows } = await db.query<{ variables: Record<string, unknown> }>(
    `select r.variables from campaign_calls k join campaign_recipients r on r.id = k.recipient_id where k.id = $1`,
    [callId],
  );
  return rows[0]?.variables ?? null;
}

// ---- settlement ----

export interface SettleInput {
  id: string;
  campaign_id: string;
  developer_id: string;
  recipient_id: string;
  phone: string;
  attempt: number;
  status: string;
  call_sid: string | null;
  session_id: string | null;
  answered_by: string | null;
  error: string | null;
  ended_at: Date | null;
  settled_at: Date | null;
  retry_max_attempts: number;
  retry_backoff_seconds: number;
  retry_on: string[];
  webhook_url: string | null;
  session_status: string | null;
  session_end_reason: SessionEndReason | null;
  /** rt_sessions.answered_by (answering-machine detection). */
  session_answered_by: string | null;
  /** rt_sessions.beep_at_ms: when the voicemail beep came (ms into the call), null without one. */
  session_beep_at_ms: number | null;
  /** Set when the platform hung the call up (the campaign was canceled). */
  hangup_reason: string | null;
  /** Set when the platform refused the answered call (session cap or fleet full): the recipient is re-queued. */
  requeue_reason: string | null;
  /** Earlier attempts of this recipient the platform refused (they do not count against retry.maxAttempts). */
  refused_before: number;
}

/**
 * An ended attempt with what decides its outcome: the session's answer and end come through their owner's subquery
 * (realtime/sessions.ts), so this stays one statement. The agent is not read: the end reason says what happened.
 */
export async function getSettleInput(db: Queryable, callId: string): Promise<SettleInput | null> {
  const { rows } = await db.query<SettleInput>(
    `select k.id, k.campaign_id, c.developer_id, k.recipient_id, r.phone, k.attempt, k.status, k.call_sid,
            k.session_id, k.answered_by, k.error, k.ended_at, k.settled_at, c.retry_max_attempts,
            c.retry_backoff_seconds, c.retry_on, c.webhook_url, s.status as session_status,
            s.end_reason as session_end_reason, s.answered_by as session_answered_by,
            s.beep_at_ms as session_beep_at_ms, k.hangup_reason, k.requeue_reason,
            (select count(*)::int from campaign_calls x
              where x.recipient_id = k.recipient_id and x.attempt < k.attempt and x.requeue_reason is not null)
              as refused_before
       from campaign_calls k
       join campaigns c on c.id = k.campaign_id
       join campaign_recipients r on r.id = k.recipient_id
       left join lateral (${sessionOutcomeSql('k.session_id')}) s on true
      where k.id = $1`,
    [callId],
  );
  return rows[0] ?? null;
}

/**
 * Settles an attempt once (settled_at) and moves its recipient on: back to `pending` at `retryAt`, or `done` with
 * the outcome. Runs in the caller's transaction (with the webhook message). False when it was settled already.
 */
export async function settleAttempt(
  tx: Queryable,
  s: { callId: string; recipientId: string; outcome: string; reason: string | null; answeredBy: string | null },
  retryAt: Date | null,
): Promise<boolean> {
  const r = await tx.query(
    `update campaign_calls set settled_at = now(), outcome = $2, answered_by = coalesce(answered_by, $3)
      where id = $1 and settled_at is null`,
    [s.callId, s.outcome, s.answeredBy],
  );
  if (r.rowCount !== 1) return false;
  await tx.query(
    `update campaign_recipients set updated_at = now(),
       state = case when $4::timestamptz is not null and state = 'calling' then 'pending' else 'done' end,
       next_attempt_at = coalesce($4, next_attempt_at),
       outcome = case when $4::timestamptz is not null then outcome else $2 end,
       outcome_reason = case when $4::timestamptz is not null then outcome_reason else $3 end
     where id = $1 and state = 'calling'`,
    [s.recipientId, s.outcome, s.reason, retryAt],
  );
  return true;
}

/**
 * Settles an attempt the platform refused after the callee answered (requeue_reason set) without an outcome: the
 * recipient goes back to `pending`, due at `at`. Runs in the caller's transaction; false when it was settled already.
 */
export async function requeueAttempt(tx: Queryable, callId: string, recipientId: string, at: Date): Promise<boolean> {
  const r = await tx.query(
    `update campaign_calls set settled_at = now(), error = coalesce(error, requeue_reason)
      where id = $1 and settled_at is null`,
    [callId],
  );
  if (r.rowCount !== 1) return false;
  await tx.query(
    `update campaign_recipients set state = 'pending', next_attempt_at = $2, updated_at = now()
      where id = $1 and state = 'calling'`,
    [recipientId, at],
  );
  return true;
}

/**
 * The platform refused this answered attempt (its session cap or the fleet was full when it connected): the first
 * reason is kept, and settlement re-queues the recipient instead of failing it.
 */
export async function markRefused(db: Queryable, callId: string, reason: string): Promise<void> {
  await db.query(`update campaign_calls set requeue_reason = coalesce(requeue_reason, $2) where id = $1`, [
    callId,
    reason.slice(0, 300),
  ]);
}

/** A campaign with nobody left to call is completed (a paused one stays paused until resumed). */
export async function completeIfFinished(db: Queryable, campaignId: string): Promise<boolean> {
  const r = await db.query(
    `update campaigns set status = 'completed', completed_at = now(), updated_at = now()
      where id = $1 and status = 'active'
        and not exists (select 1 from campaign_recipients where campaign_id = $1 and state <> 'done')`,
    [campaignId],
  );
  return r.rowCount === 1;
}

/** A canceled campaign's recipients still pending when their in-flight attempt ended are closed as canceled. */
export async function closeIfCanceled(db: Queryable, campaignId: string): Promise<void> {
  await db.query(
    `update campaign_recipients set state = 'done', outcome = 'canceled', outcome_reason = 'campaign canceled',
       updated_at = now()
      where campaign_id = $1 and state = 'pending'
        and exists (select 1 from campaigns where id = $1 and status = 'canceled')`,
    [campaignId],
  );
}

// ---- reconciler ----

/** Attempts claimed (or mid-dial) longer than `olderMs` without a CallSid: their dial job may be lost. */
export async function undialedCalls(db: Queryable, olderMs: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from campaign_calls where status in ('claimed', 'dialing') and call_sid is null and settled_at is null
        and claimed_at < now() - make_interval(secs => $1::float / 1000)
      order by claimed_at limit 200`,
    [olderMs],
  );
  return rows.map((r) => r.id);
}

/** Ended attempts not settled after `olderMs` (the settle job was lost). */
export async function unsettledCalls(db: Queryable, olderMs: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from campaign_calls where settled_at is null and ended_at is not null
        and ended_at < now() - make_interval(secs => $1::float / 1000)
      order by ended_at limit 200`,
    [olderMs],
  );
  return rows.map((r) => r.id);
}

export interface LiveCallBounds {
  ringSeconds: number;
  /** The platform's cap on a session (REALTIME_MAX_SESSION_SECONDS): a campaign's own cap cannot exceed it. */
  maxSessionSeconds: number;
  marginSeconds: number;
  giveUpSeconds: number;
}

/**
 * Attempts dialled and still not ended past ring timeout + their maximum duration + margin: Twilio must have ended
 * them by now, so their final status callback was lost. `giveUp`: also past the longer bound (when Twilio cannot be
 * asked, the attempt is settled as failed).
 */
export async function overdueLiveCalls(
  db: Queryable,
  b: LiveCallBounds,
): Promise<Array<{ id: string; call_sid: string; give_up: boolean }>> {
  const { rows } = await db.query<{ id: string; call_sid: string; give_up: boolean }>(
    `with k as (
       select k.id, k.call_sid, coalesce(k.dialed_at, k.claimed_at)
                + make_interval(secs => $1 + least(coalesce(c.max_duration_seconds, $2), $2) + $3) as due
         from campaign_calls k join campaigns c on c.id = k.campaign_id
        where k.ended_at is null and k.call_sid is not null)
     select id, call_sid, due + make_interval(secs => $4) < now() as give_up from k
      where due < now() order by due limit 200`,
    [b.ringSeconds, b.maxSessionSeconds, b.marginSeconds, b.giveUpSeconds],
  );
  return rows;
}

export interface DeadSessionBounds {
  /** A session ended this long ago whose attempt has no final status: its callback is not coming. */
  endedGraceSeconds: number;
  /** A running session its process has not touched for this long: the process died (not yet marked lost). */
  staleSeconds: number;
  /** An attempt dialled this long ago that never got a session: its connect callback reached no one. */
  unconnectedSeconds: number;
}

/**
 * Attempts dialled and not ended whose session died (issue #35: after a crash the final status callback reaches
 * no one): the session ended (lost with its process, expired unclaimed, or ended while the callback was lost)
 * `endedGraceSeconds` ago or more; or it is still `active` but untouched for `staleSeconds` (its process is gone
 * and the keeper has not marked it yet); or no session ever came for `unconnectedSeconds`. `ended`: the session
 * has definitely ended (a call Twilio still has live may be hung up: nobody is on it).
 */
export async function deadSessionCalls(
  db: Queryable,
  b: DeadSessionBounds,
): Promise<Array<{ id: string; call_sid: string; ended: boolean }>> {
  const { rows } = await db.query<{ id: string; call_sid: string; ended: boolean }>(
    `select k.id, k.call_sid, coalesce(s.status not in ('active', 'pending'), false) as ended
       from campaign_calls k left join lateral (${sessionOutcomeSql('k.session_id')}) s on true
      where k.ended_at is null and k.call_sid is not null
        and ((s.status not in ('active', 'pending') and s.ended_at < now() - make_interval(secs => $1))
          or (s.status = 'active' and s.heartbeat_at < now() - make_interval(secs => $2))
          or ((s.status is null or s.status = 'pending')
              and coalesce(k.dialed_at, k.claimed_at) < now() - make_interval(secs => $3)))
      order by k.dialed_at limit 200`,
    [b.endedGraceSeconds, b.staleSeconds, b.unconnectedSeconds],
  );
  return rows;
}

/** Active campaigns with a recipient due now (the dispatcher is enqueued for each). */
export async function campaignsWithDueRecipients(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select c.id from campaigns c where c.status = 'active'
        and exists (select 1 from campaign_recipients r
                     where r.campaign_id = c.id and r.state = 'pending' and r.next_attempt_at <= now())
      order by c.id limit 500`,
  );
  return rows.map((r) => r.id);
}

/** An attempt that can no longer be dialled (campaign canceled/paused before the dial, or dialling failed for good). */
export async function endUndialed(db: Queryable, callId: string, status: string, error: string): Promise<boolean> {
  const r = await db.query(
    `update campaign_calls set status = $2, error = $3, ended_at = now()
      where id = $1 and status in ('claimed', 'dialing') and call_sid is null`,
    [callId, status, error.slice(0, 500)],
  );
  return r.rowCount === 1;
}
