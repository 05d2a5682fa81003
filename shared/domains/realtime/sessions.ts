import type { CallAnalysis, TakenMessage } from '../../contracts/call-analysis.ts';
import type { SessionEndReason } from '../../contracts/sessions.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import type { AnsweredBy } from './amd/detector.ts';
import { taskWebhookUrlSql } from './outbound-tasks.ts';

/**
 * Every statement on rt_sessions alone: a session's life (pending, admitted, started, ended), the keeper's upkeep,
 * who answered and where it was transferred, and what its token and events say. Its trace rows are in
 * session-trace.ts, the observability reads over both in session-reads.ts, outbound tasks in outbound-tasks.ts.
 */

// ---- lifecycle ----

export interface PendingSession {
  id: string;
  developerId: string;
  agentId: string;
  direction: 'inbound' | 'outbound';
  from: string;
  to: string;
  instanceId: string | null;
  taskId: string | null;
  expiresAt: Date;
  /** Where the call's events go (call.analyzed); null: the outbound task's, or none. */
  webhookUrl?: string | null;
}

/** A Twilio session waiting for its stream (POST /v1/sessions/twilio, or an outbound call answered). */
export async function insertPendingTwilioSession(db: Queryable, s: PendingSession): Promise<void> {
  await db.query(
    `insert into rt_sessions (id, developer_id, agent_id, channel, direction, from_number, to_number, instance_id,
       task_id, expires_at, webhook_url)
     values ($1, $2, $3, 'twilio', $4, $5, $6, $7, $8, $9, $10)`,
    [
      s.id,
      s.developerId,
      s.agentId,
      s.direction,
      s.from,
      s.to,
      s.instanceId,
      s.taskId,
      s.expiresAt,
      s.webhookUrl ?? null,
    ],
  );
}

/** A direct session waiting for the socket its token opens (POST /v1/sessions/direct). */
export async function insertPendingDirectSession(
  db: Queryable,
  s: {
    id: string;
    developerId: string;
    agentId: string;
    instanceId: string | null;
    expiresAt: Date;
    webhookUrl?: string | null;
  },
): Promise<void> {
  await db.query(
    `insert into rt_sessions (id, developer_id, agent_id, channel, instance_id, expires_at, webhook_url)
     values ($1, $2, $3, 'direct', $4, $5, $6)`,
    [s.id, s.developerId, s.agentId, s.instanceId, s.expiresAt, s.webhookUrl ?? null],
  );
}

/** Drops a pending session nobody can use (a connect callback that lost the race for its task). */
export async function deletePendingSession(db: Queryable, id: string): Promise<void> {
  await db.query(`delete from rt_sessions where id = $1 and status = 'pending'`, [id]);
}

/** How many sessions a developer has running now (the admission cap's count, also checked at creation). */
export async function countActiveSessions(db: Queryable, developerId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::int as n from rt_sessions where developer_id = $1 and status = 'active'`,
    [developerId],
  );
  return rows[0]?.n ?? 0;
}

export interface Admission {
  sessionId: string;
  developerId: string;
  agentId: string;
  channel: 'twilio' | 'direct';
  /** Claim the pending row a token names (true), or create the row (a direct session opened with an API key). */
  claim: boolean;
  callSid?: string | null;
  streamSid?: string | null;
  /** The developer's cap on running sessions. */
  maxActive: number;
}

/**
 * Lets a session run: `used` when the token's session is not pending any more (claimed by an earlier socket, or
 * expired) or is not the session of this developer, agent and channel; `limit` when the developer already runs
 * `maxActive` sessions. One statement (`rt_admit_session`, migration 0861) takes a per-developer transaction lock
 * server-side, so the claim is single use and the cap holds for sockets arriving at once on any process, without a
 * developer's connects queueing behind each other's round trips.
 */
export async function admitSession(db: Queryable, a: Admission): Promise<'admitted' | 'used' | 'limit'> {
  const { rows } = await db.query<{ r: 'admitted' | 'used' | 'limit' }>(
    'select rt_admit_session($1, $2, $3, $4, $5, $6, $7, $8) as r',
    [a.sessionId, a.developerId, a.agentId, a.channel, a.claim, a.callSid ?? null, a.streamSid ?? null, a.maxActive],
  );
  return rows[0]!.r;
}

export interface StartedSession {
  developerId: string;
  agentId: string;
  channel: 'twilio' | 'direct';
  callSid?: string | null;
  streamSid?: string | null;
  sttProvider: string;
  ttsProvider: string;
  llmProvider: string;
  /** The agent configuration version the session runs (agent_versions). */
  agentVersion?: number | null;
  /** Set where the start alone tells it: an agent test's call. Campaign and replay calls are labelled by them. */
  kind?: 'test' | null;
}

/**
 * Records the start. Twilio and token sessions exist since they were admitted; others (tests, tools) are created
 * here. A session starts once: a second start of the same id (a replayed token, two sockets) changes nothing and
 * throws, so a record and its recording are never overwritten.
 */
export async function markSessionStarted(db: Queryable, id: string, s: StartedSession): Promise<void> {
  const r = await db.query(
    `insert into rt_sessions (id, developer_id, agent_id, channel, status, call_sid, stream_sid, stt_provider,
       tts_provider, llm_provider, agent_version, kind, started_at, heartbeat_at)
     values ($1, $2, $3, $4, 'active', $5, $6, $7, $8, $9, $10, $11, now(), now())
     on conflict (id) do update set status = 'active', call_sid = excluded.call_sid,
       kind = coalesce(rt_sessions.kind, excluded.kind),
       stream_sid = excluded.stream_sid, stt_provider = excluded.stt_provider, tts_provider = excluded.tts_provider,
       llm_provider = excluded.llm_provider, agent_version = excluded.agent_version, started_at = now(),
       heartbeat_at = now()
     where rt_sessions.started_at is null and rt_sessions.status in ('pending', 'active')
       and rt_sessions.developer_id = excluded.developer_id`,
    [
      id,
      s.developerId,
      s.agentId,
      s.channel,
      s.callSid ?? null,
      s.streamSid ?? null,
      s.sttProvider,
      s.ttsProvider,
      s.llmProvider,
      s.agentVersion ?? null,
      s.kind ?? null,
    ],
  );
  if (r.rowCount !== 1) throw new SessionAlreadyStartedError(id);
}

/**
 * Labels a session with where it came from (its kind on the calls list), set by what drove the call: a campaign's
 * attempt, a replay's run. A replay outranks a test (a replay runs on an agent test's platform); nothing else is
 * overwritten, so a label is set once.
 */
export async function labelSessionKind(db: Queryable, id: string, kind: 'campaign' | 'replay'): Promise<void> {
  await db.query(
    `update rt_sessions set kind = $2 where id = $1 and (kind is null or (kind = 'test' and $2 = 'replay'))`,
    [id, kind],
  );
}

/** A second start of one session id: refused so that its record and recording stay the first call's. */
export class SessionAlreadyStartedError extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} has already started`);
  }
}

export interface SessionEnd {
  status: 'completed' | 'failed';
  reason: SessionEndReason;
  error: string | null;
  metrics: Record<string, number>;
  recordingKey: string | null;
  recordingMs: number | null;
}

export async function markSessionEnded(db: Queryable, id: string, s: SessionEnd): Promise<void> {
  await db.query(
    `update rt_sessions set status = $2, end_reason = $3, error = $4, metrics = $5, recording_key = $6,
       recording_ms = $7, ended_at = now()
     where id = $1 and (ended_at is null or end_reason = 'worker-lost')`,
    [id, s.status, s.reason, s.error, JSON.stringify(s.metrics), s.recordingKey, s.recordingMs],
  );
}

/** A session that could not start (bad engine configuration…): recorded so the developer sees why. */
export async function markSessionFailedToStart(
  db: Queryable,
  id: string,
  reason: Extract<SessionEndReason, 'start-failed' | 'socket-closed' | 'admission'>,
  error: string,
) {
  await db.query(
    `update rt_sessions set status = 'failed', end_reason = $2, error = $3, ended_at = now(),
       started_at = coalesce(started_at, now()) where id = $1`,
    [id, reason, error.slice(0, 1000)],
  );
}

// ---- the keeper's upkeep (each a conditional UPDATE, safe in every realtime process at once) ----

export async function touchSessions(db: Queryable, ids: string[]): Promise<void> {
  if (ids.length)
    await db.query(`update rt_sessions set heartbeat_at = now() where id = any($1) and status = 'active'`, [ids]);
}

/** Ends, as failed `worker-lost`, active sessions nobody touched for `staleSeconds` (except `live` ones). */
export async function failLostSessions(db: Queryable, staleSeconds: number, live: string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `update rt_sessions
        set status = 'failed', end_reason = 'worker-lost', ended_at = coalesce(heartbeat_at, started_at),
            error = 'the realtime process running this session stopped without ending it'
      where status = 'active' and coalesce(heartbeat_at, started_at) < now() - make_interval(secs => $1)
        and not (id = any($2))
      returning id`,
    [staleSeconds, live],
  );
  return rows.map((r) => r.id);
}

/** Pending sessions whose token expired before any stream claimed them (`stream-never-connected`). */
export async function expirePendingSessions(db: Queryable): Promise<number> {
  const r = await db.query(
    `update rt_sessions set status = 'expired', end_reason = 'stream-never-connected', ended_at = expires_at
      where status = 'pending' and expires_at < now()`,
  );
  return r.rowCount ?? 0;
}

export async function sessionOwner(db: Queryable, id: string) {
  const { rows } = await db.query<{ developer_id: string; status: string }>(
    'select developer_id, status from rt_sessions where id = $1',
    [id],
  );
  return rows[0] ?? null;
}

/** Developers with a started session of this CallSid or session id (operator tooling given only the call id). */
export async function callOwners(db: Queryable, callId: string): Promise<string[]> {
  const { rows } = await db.query<{ developer_id: string }>(
    `select distinct developer_id from rt_sessions where (call_sid = $1 or id = $1) and started_at is not null`,
    [callId],
  );
  return rows.map((r) => r.developer_id);
}

/** Attaches a recovered recording unless the session has one already. */
export async function attachRecording(db: Queryable, id: string, key: string, ms: number): Promise<void> {
  await db.query(
    `update rt_sessions set recording_key = $2, recording_ms = $3 where id = $1 and recording_key is null`,
    [id, key, ms],
  );
}

// ---- answering-machine detection and transfers ----

/**
 * A session's answer: the first decision wins (the detector's or Twilio's); a later beep time still fills
 * `beep_at_ms`. Returns true when this call set `answered_by`. Its outbound task takes the answer too
 * (outbound-tasks.ts, copySessionAnswerToTask), in the caller's transaction.
 */
export async function recordSessionAnsweredBy(
  db: Queryable,
  sessionId: string,
  a: { answeredBy: AnsweredBy; source: 'detector' | 'twilio'; beepAtMs?: number | null },
): Promise<boolean> {
  // Conditional update: of two deciders racing, exactly one sees `answered_by is null`.
  const { rowCount } = await db.query(
    `update rt_sessions set answered_by = $2, amd_source = $3 where id = $1 and answered_by is null`,
    [sessionId, a.answeredBy, a.source],
  );
  if (a.beepAtMs !== undefined && a.beepAtMs !== null) {
    await db.query('update rt_sessions set beep_at_ms = coalesce(beep_at_ms, $2) where id = $1', [
      sessionId,
      Math.max(0, Math.round(a.beepAtMs)),
    ]);
  }
  return (rowCount ?? 0) > 0;
}

export interface TransferRecord {
  target: string;
  to: string;
  mode: 'cold' | 'warm';
  summary: string;
  atMs: number;
}

/** The transfer a session made (null: it did not go through after all). */
export async function recordTransfer(db: Queryable, sessionId: string, t: TransferRecord | null): Promise<void> {
  await db.query('update rt_sessions set transfer = $2 where id = $1', [sessionId, t && JSON.stringify(t)]);
}

/** What the whisper callback needs: the transfer (summary) and the caller's number. */
export async function sessionTransfer(db: Queryable, sessionId: string) {
  const { rows } = await db.query<{ transfer: TransferRecord | null; from_number: string | null; direction: string }>(
    'select transfer, from_number, to_number, direction from rt_sessions where id = $1',
    [sessionId],
  );
  return rows[0] ?? null;
}

// ---- what a session's token and events say ----

/** What a session's token says, read back from its row (a replayed connect answers the same session). */
export async function sessionTokenFields(db: Queryable, id: string) {
  const { rows } = await db.query<{
    developer_id: string;
    agent_id: string;
    from_number: string | null;
    to_number: string | null;
    instance_id: string | null;
    task_id: string | null;
    expires_at: Date | null;
  }>(
    `select developer_id, agent_id, from_number, to_number, instance_id, task_id, expires_at
       from rt_sessions where id = $1 and channel = 'twilio'`,
    [id],
  );
  return rows[0] ?? null;
}

/** What an answered-by event says about its session, and where the session's outbound task sends events. */
export async function sessionEventContext(db: Queryable, sessionId: string) {
  const { rows } = await db.query<{
    developer_id: string;
    agent_id: string;
    call_sid: string | null;
    task_id: string | null;
    answered_by: AnsweredBy | null;
    beep_at_ms: number | null;
    amd_source: string | null;
    webhook_url: string | null;
  }>(
    `select s.developer_id, s.agent_id, s.call_sid, s.task_id, s.answered_by, s.beep_at_ms, s.amd_source,
            (${taskWebhookUrlSql('s.task_id')}) as webhook_url
       from rt_sessions s where s.id = $1`,
    [sessionId],
  );
  return rows[0] ?? null;
}

// ---- what a call left behind: its analysis and a message taken (issue #33) ----

/** What the post-call analysis needs of a session, and where its events go (its own address, else its task's). */
export async function analysisContext(db: Queryable, sessionId: string) {
  const { rows } = await db.query<{
    id: string;
    developer_id: string;
    agent_id: string;
    agent_version: number | null;
    call_sid: string | null;
    channel: string;
    end_reason: SessionEndReason | null;
    ended_at: Date | null;
    analysis: CallAnalysis | null;
    taken_message: TakenMessage | null;
    webhook_url: string | null;
  }>(
    `select s.id, s.developer_id, s.agent_id, s.agent_version, s.call_sid, s.channel, s.end_reason, s.ended_at,
            s.analysis, s.taken_message, coalesce(s.webhook_url, (${taskWebhookUrlSql('s.task_id')})) as webhook_url
       from rt_sessions s where s.id = $1`,
    [sessionId],
  );
  return rows[0] ?? null;
}

/** Stores a call's analysis once: false when one is stored already (a retried job keeps the first). */
export async function storeSessionAnalysis(db: Queryable, sessionId: string, a: CallAnalysis): Promise<boolean> {
  const r = await db.query('update rt_sessions set analysis = $2 where id = $1 and analysis is null', [
    sessionId,
    JSON.stringify(a),
  ]);
  return r.rowCount === 1;
}

/** The message a caller left with `take_message` (a later one in the same call replaces it). */
export async function recordTakenMessage(db: Queryable, sessionId: string, m: TakenMessage): Promise<void> {
  await db.query('update rt_sessions set taken_message = $2 where id = $1', [sessionId, JSON.stringify(m)]);
}

/**
 * How many sessions a developer has running, as a subquery for one statement of another owner (the campaign
 * dispatcher's claim under the developer's session cap, campaigns/store.ts): `developerId` is its SQL expression.
 */
export function activeSessionCountSql(developerId: string): string {
  return `select count(*)::int from rt_sessions x where x.developer_id = ${developerId} and x.status = 'active'`;
}

/**
 * A session's status, end reason and answering-machine answer (and beep), when it ended and when its process last
 * touched it (`heartbeat_at`), as a subquery for one statement of another owner (a campaign attempt's settlement
 * and the look-up of attempts whose session died, campaigns/store.ts): `sessionId` is its SQL expression.
 */
export function sessionOutcomeSql(sessionId: string): string {
  return `select x.status, x.end_reason, x.answered_by, x.beep_at_ms, x.ended_at,
            coalesce(x.heartbeat_at, x.started_at) as heartbeat_at
       from rt_sessions x where x.id = ${sessionId}`;
}
