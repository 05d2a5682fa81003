import type { Queryable } from '../../kernel/db/pool.ts';

/**
 * Every statement on the realtime tables (rt_sessions, rt_turns, rt_tool_executions, rt_interruptions,
 * rt_outbound_tasks). The api (session creation, outbound tasks, observability reads), the realtime role (stream
 * claims, traces, the session keeper) and the CPU worker (the dialler) all go through here, so the tables' shape
 * is known in one place.
 */

// ---- sessions: lifecycle ----

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
}

/** A Twilio session waiting for its stream (POST /v1/sessions/twilio, or an outbound call answered). */
export async function insertPendingTwilioSession(db: Queryable, s: PendingSession): Promise<void> {
  await db.query(
    `insert into rt_sessions (id, developer_id, agent_id, channel, direction, from_number, to_number, instance_id,
       task_id, expires_at)
     values ($1, $2, $3, 'twilio', $4, $5, $6, $7, $8, $9)`,
    [s.id, s.developerId, s.agentId, s.direction, s.from, s.to, s.instanceId, s.taskId, s.expiresAt],
  );
}

/** A direct session waiting for the socket its token opens (POST /v1/sessions/direct). */
export async function insertPendingDirectSession(
  db: Queryable,
  s: { id: string; developerId: string; agentId: string; instanceId: string | null; expiresAt: Date },
): Promise<void> {
  await db.query(
    `insert into rt_sessions (id, developer_id, agent_id, channel, instance_id, expires_at)
     values ($1, $2, $3, 'direct', $4, $5)`,
    [s.id, s.developerId, s.agentId, s.instanceId, s.expiresAt],
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
}

/**
 * Records the start. Twilio and token sessions exist since they were admitted; others (tests, tools) are created
 * here. A session starts once: a second start of the same id (a replayed token, two sockets) changes nothing and
 * throws, so a record and its recording are never overwritten.
 */
export async function markSessionStarted(db: Queryable, id: string, s: StartedSession): Promise<void> {
  const r = await db.query(
    `insert into rt_sessions (id, developer_id, agent_id, channel, status, call_sid, stream_sid, stt_provider,
       tts_provider, llm_provider, agent_version, started_at, heartbeat_at)
     values ($1, $2, $3, $4, 'active', $5, $6, $7, $8, $9, $10, now(), now())
     on conflict (id) do update set status = 'active', call_sid = excluded.call_sid,
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
    ],
  );
  if (r.rowCount !== 1) throw new SessionAlreadyStartedError(id);
}

/** A second start of one session id: refused so that its record and recording stay the first call's. */
export class SessionAlreadyStartedError extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} has already started`);
  }
}

export interface SessionEnd {
  status: 'completed' | 'failed';
  reason: string;
  error: string | null;
  metrics: Record<string, number>;
  recordingKey: string | null;
  recordingMs: number | null;
}

export async function markSessionEnded(db: Queryable, id: string, s: SessionEnd): Promise<void> {
  await db.query(
    `update rt_sessions set status = $2, end_reason = $3, error = $4, metrics = $5, recording_key = $6,
       recording_ms = $7, ended_at = now()
     where id = $1 and (ended_at is null or end_reason = 'worker_lost')`,
    [id, s.status, s.reason, s.error, JSON.stringify(s.metrics), s.recordingKey, s.recordingMs],
  );
}

/** A session that could not start (bad engine configuration…): recorded so the developer sees why. */
export async function markSessionFailedToStart(db: Queryable, id: string, reason: string, error: string) {
  await db.query(
    `update rt_sessions set status = 'failed', end_reason = $2, error = $3, ended_at = now(),
       started_at = coalesce(started_at, now()) where id = $1`,
    [id, reason, error.slice(0, 1000)],
  );
}

// ---- sessions: trace rows ----

export interface TurnRow {
  idx: number;
  speaker: 'user' | 'assistant';
  text: string;
  full_text: string | null;
  start_ms: number;
  end_ms: number;
  stt_ms: number | null;
  llm_ms: number | null;
  tts_ms: number | null;
  latency_ms: number | null;
  endpoint_ms: number | null;
  overhead_ms: number | null;
  interrupted: boolean;
  error: string | null;
  /** The caller went on speaking within 500 ms after this reply started (assistant turns). */
  suspected_cut_in: boolean;
}

export async function upsertTurn(db: Queryable, sessionId: string, t: TurnRow): Promise<void> {
  await db.query(
    `insert into rt_turns (session_id, idx, speaker, text, full_text, start_ms, end_ms, stt_ms, llm_ms, tts_ms,
       latency_ms, endpoint_ms, overhead_ms, interrupted, error, suspected_cut_in)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     on conflict (session_id, idx) do update set text = excluded.text, full_text = excluded.full_text,
       end_ms = excluded.end_ms, interrupted = excluded.interrupted, error = excluded.error,
       suspected_cut_in = excluded.suspected_cut_in`,
    [
      sessionId,
      t.idx,
      t.speaker,
      t.text,
      t.full_text,
      t.start_ms,
      t.end_ms,
      t.stt_ms,
      t.llm_ms,
      t.tts_ms,
      t.latency_ms,
      t.endpoint_ms,
      t.overhead_ms,
      t.interrupted,
      t.error,
      t.suspected_cut_in,
    ],
  );
}

export interface ToolRow {
  turn_idx: number;
  name: string;
  ok: boolean;
  error: string | null;
  duration_ms: number;
  at_ms: number;
}

export async function insertToolExecution(db: Queryable, sessionId: string, t: ToolRow): Promise<void> {
  await db.query(
    `insert into rt_tool_executions (session_id, turn_idx, name, ok, error, duration_ms, at_ms)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [sessionId, t.turn_idx, t.name, t.ok, t.error, t.duration_ms, t.at_ms],
  );
}

export interface InterruptionRow {
  turn_idx: number;
  at_ms: number;
  detection_ms: number;
  stop_ms: number;
  bleed_words: number;
}

export async function insertInterruption(
  db: Queryable,
  s: { sessionId: string; developerId: string; agentId: string; reason: string },
  i: InterruptionRow,
): Promise<void> {
  await db.query(
    `insert into rt_interruptions (session_id, developer_id, agent_id, turn_idx, at_ms, detection_ms, stop_ms,
       bleed_words, reason)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [s.sessionId, s.developerId, s.agentId, i.turn_idx, i.at_ms, i.detection_ms, i.stop_ms, i.bleed_words, s.reason],
  );
}

// ---- sessions: the keeper's upkeep (each a conditional UPDATE, safe in every realtime process at once) ----

export async function touchSessions(db: Queryable, ids: string[]): Promise<void> {
  if (ids.length)
    await db.query(`update rt_sessions set heartbeat_at = now() where id = any($1) and status = 'active'`, [ids]);
}

/** Ends, as failed `worker_lost`, active sessions nobody touched for `staleSeconds` (except `live` ones). */
export async function failLostSessions(db: Queryable, staleSeconds: number, live: string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `update rt_sessions
        set status = 'failed', end_reason = 'worker_lost', ended_at = coalesce(heartbeat_at, started_at),
            error = 'the realtime process running this session stopped without ending it'
      where status = 'active' and coalesce(heartbeat_at, started_at) < now() - make_interval(secs => $1)
        and not (id = any($2))
      returning id`,
    [staleSeconds, live],
  );
  return rows.map((r) => r.id);
}

/** Pending sessions whose token expired before any stream claimed them. */
export async function expirePendingSessions(db: Queryable): Promise<number> {
  const r = await db.query(
    `update rt_sessions set status = 'expired', ended_at = expires_at where status = 'pending' and expires_at < now()`,
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

// ---- sessions: observability reads ----

export interface SessionRow {
  id: string;
  agent_id: string;
  status: string;
  channel: string;
  call_sid: string | null;
  started_at: Date | null;
  ended_at: Date | null;
  recording_key: string | null;
  end_reason?: string | null;
  /** Why a failed session failed (listStartedSessions, for the calls list). */
  error?: string | null;
  answered_by: AnsweredBy | null;
  beep_at_ms: number | null;
  transfer?: TransferRecord | null;
  agent_version: number | null;
  turns: number;
  /** The engines the session ran on (findStartedSession only). */
  stt_provider?: string | null;
  tts_provider?: string | null;
  llm_provider?: string | null;
}

/** Sessions that started (pending ones that never connected are not traces), newest first, one extra for paging. */
export async function listStartedSessions(
  db: Queryable,
  developerId: string,
  q: { agentId?: string; after: string | null; limit: number },
): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `select s.id, s.agent_id, s.status, s.channel, s.call_sid, s.started_at, s.ended_at, s.recording_key,
            s.end_reason, s.error, s.answered_by, s.beep_at_ms, s.agent_version,
            (select count(*)::int from rt_turns t where t.session_id = s.id) as turns
       from rt_sessions s
      where s.developer_id = $1 and s.started_at is not null
        and ($2::text is null or s.agent_id = $2) and ($3::text is null or s.id < $3)
      order by s.id desc limit $4`,
    [developerId, q.agentId ?? null, q.after, q.limit + 1],
  );
  return rows;
}

export async function findStartedSession(
  db: Queryable,
  developerId: string,
  by: { id?: string; callSid?: string },
): Promise<SessionRow | null> {
  const { rows } = await db.query<SessionRow>(
    `select s.id, s.agent_id, s.status, s.channel, s.call_sid, s.started_at, s.ended_at, s.recording_key,
            s.end_reason, s.answered_by, s.beep_at_ms, s.transfer, s.stt_provider, s.tts_provider, s.llm_provider,
            s.agent_version, 0 as turns
       from rt_sessions s
      where s.developer_id = $1 and s.started_at is not null
        and ${by.id ? 's.id = $2' : 's.call_sid = $2'}
      order by s.id desc limit 1`,
    [developerId, by.id ?? by.callSid],
  );
  return rows[0] ?? null;
}

export async function loadTrace(db: Queryable, sessionId: string) {
  const [turns, tools, interruptions] = await Promise.all([
    db.query<TurnRow>(
      `select idx, speaker, text, start_ms, end_ms, stt_ms, llm_ms, tts_ms, latency_ms, endpoint_ms, overhead_ms,
              interrupted, error, suspected_cut_in
         from rt_turns where session_id = $1 order by idx`,
      [sessionId],
    ),
    db.query<ToolRow>(
      `select turn_idx, name, ok, error, duration_ms, at_ms from rt_tool_executions where session_id = $1 order by id`,
      [sessionId],
    ),
    db.query<InterruptionRow>(
      `select turn_idx, at_ms, detection_ms, stop_ms, bleed_words from rt_interruptions where session_id = $1 order by id`,
      [sessionId],
    ),
  ]);
  return { turns: turns.rows, tools: tools.rows, interruptions: interruptions.rows };
}

type Stat = number | null;
export interface InterruptionStats {
  n: number;
  sessions: number;
  detection: [Stat, Stat, Stat];
  stop: [Stat, Stat, Stat];
  bleed: [Stat, Stat, Stat];
  bleedTotal: number;
}

/** avg / p50 / p95 of detection, stop and bleed-through over a developer's interruptions, plus the session count. */
export async function interruptionStats(
  db: Queryable,
  developerId: string,
  q: { agentId?: string; from?: string; to?: string },
): Promise<InterruptionStats> {
  const params = [developerId, q.agentId ?? null, q.from ?? null, q.to ?? null];
  const stats = (col: string, p: string) =>
    `avg(${col})::float8 as ${p}_avg, percentile_cont(0.5) within group (order by ${col})::float8 as ${p}_p50,
     percentile_cont(0.95) within group (order by ${col})::float8 as ${p}_p95`;
  const [agg, sessions] = await Promise.all([
    db.query<Record<string, number | null>>(
      `select count(*)::int as n, ${stats('detection_ms', 'd')}, ${stats('stop_ms', 's')},
              ${stats('bleed_words', 'b')}, sum(bleed_words)::int as b_total
         from rt_interruptions
        where developer_id = $1 and ($2::text is null or agent_id = $2)
          and ($3::timestamptz is null or created_at >= $3) and ($4::timestamptz is null or created_at < $4)`,
      params,
    ),
    db.query<{ n: number }>(
      `select count(*)::int as n from rt_sessions
        where developer_id = $1 and started_at is not null and ($2::text is null or agent_id = $2)
          and ($3::timestamptz is null or started_at >= $3) and ($4::timestamptz is null or started_at < $4)`,
      params,
    ),
  ]);
  const a = agg.rows[0]!;
  const triple = (p: string): [Stat, Stat, Stat] => [a[`${p}_avg`]!, a[`${p}_p50`]!, a[`${p}_p95`]!];
  return {
    n: a.n ?? 0,
    sessions: sessions.rows[0]?.n ?? 0,
    detection: triple('d'),
    stop: triple('s'),
    bleed: triple('b'),
    bleedTotal: a.b_total ?? 0,
  };
}

export interface CutInRow {
  agent_id: string;
  /** Replies to caller speech (assistant turns with a latency). */
  replies: number;
  suspected: number;
}

/**
 * Suspected cut-ins per agent (issue 25): replies to caller speech after which the caller went on within 500 ms,
 * over sessions that started in [from, to). One row per agent with replies; `agentId` narrows to one.
 */
export async function cutInStats(
  db: Queryable,
  developerId: string,
  q: { agentId?: string; from?: string; to?: string },
): Promise<CutInRow[]> {
  const { rows } = await db.query<CutInRow>(
    `select s.agent_id, count(*)::int as replies, count(*) filter (where t.suspected_cut_in)::int as suspected
       from rt_turns t join rt_sessions s on s.id = t.session_id
      where s.developer_id = $1 and ($2::text is null or s.agent_id = $2)
        and ($3::timestamptz is null or s.started_at >= $3) and ($4::timestamptz is null or s.started_at < $4)
        and t.speaker = 'assistant' and t.latency_ms is not null
      group by s.agent_id order by s.agent_id`,
    [developerId, q.agentId ?? null, q.from ?? null, q.to ?? null],
  );
  return rows;
}

/** The newest recording of a call, by Twilio CallSid or (direct sessions) session id. */
export async function latestRecordingKey(db: Queryable, developerId: string, callSid: string) {
  const { rows } = await db.query<{ recording_key: string }>(
    `select recording_key from rt_sessions
      where developer_id = $1 and (call_sid = $2 or id = $2) and recording_key is not null order by id desc limit 1`,
    [developerId, callSid],
  );
  return rows[0]?.recording_key ?? null;
}

// ---- outbound tasks ----

export interface OutboundTaskRow {
  id: string;
  developer_id: string;
  agent_id: string;
  from_number: string;
  to_number: string;
  call_sid: string | null;
  session_id: string | null;
  answered_by: string | null;
  variables: Record<string, string | number | boolean>;
  webhook_url: string | null;
}

export async function insertOutboundTask(
  db: Queryable,
  t: {
    id: string;
    developerId: string;
    agentId: string;
    from: string;
    to: string;
    variables?: Record<string, string | number | boolean>;
    webhookUrl?: string | null;
  },
): Promise<void> {
  await db.query(
    `insert into rt_outbound_tasks (id, developer_id, agent_id, from_number, to_number, variables, webhook_url)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [t.id, t.developerId, t.agentId, t.from, t.to, JSON.stringify(t.variables ?? {}), t.webhookUrl ?? null],
  );
}

/** Outbound tasks not yet placed, older than `olderThanMs` and younger than `window`: the reconciler's candidates. */
export async function undialledOutboundTasks(db: Queryable, olderThanMs: number, window: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from rt_outbound_tasks where status = 'queued' and call_sid is null
        and created_at < now() - make_interval(secs => $1::float / 1000)
        and created_at > now() - $2::interval
      order by created_at limit 100`,
    [olderThanMs, window],
  );
  return rows.map((r) => r.id);
}

/** Fails a task still waiting to be placed (the dispatcher gave up on it); a placed one is left alone. */
export async function failUndialledTask(db: Queryable, id: string, error: string): Promise<void> {
  await db.query(
    `update rt_outbound_tasks set status = 'failed', error = $2, updated_at = now()
      where id = $1 and status = 'queued' and call_sid is null`,
    [id, error],
  );
}

export async function getOutboundTask(db: Queryable, id: string): Promise<OutboundTaskRow | null> {
  const { rows } = await db.query<OutboundTaskRow>(
    `select id, developer_id, agent_id, from_number, to_number, call_sid, session_id, answered_by, variables,
            webhook_url
       from rt_outbound_tasks where id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

// ---- answering-machine detection and transfers ----

export type AnsweredBy = 'human' | 'machine' | 'unknown';

/**
 * Twilio's async AMD result, kept on the task (its callback may come before the stream starts); the live
 * session reads it while its own detector listens. Returns the task's session id, if it has one yet.
 */
export async function recordTaskAnsweredBy(db: Queryable, taskId: string, answeredBy: AnsweredBy, twilio: string) {
  const { rows } = await db.query<{ session_id: string | null }>(
    `update rt_outbound_tasks set answered_by = coalesce(answered_by, $2),
            amd_answered_by = coalesce(amd_answered_by, $3), updated_at = now()
      where id = $1 returning session_id`,
    [taskId, answeredBy, twilio.slice(0, 40)],
  );
  return rows[0]?.session_id ?? null;
}

/** Twilio's AMD answer for a task, once its callback came: ours (`machine`) and Twilio's own (`machine_end_beep`). */
export async function taskTwilioAmd(db: Queryable, taskId: string) {
  const { rows } = await db.query<{ answered_by: AnsweredBy; amd_answered_by: string }>(
    `select answered_by, amd_answered_by from rt_outbound_tasks where id = $1 and amd_answered_by is not null`,
    [taskId],
  );
  return rows[0] ?? null;
}

/**
 * A session's answer: the first decision wins (the detector's or Twilio's); a later beep time still fills
 * `beep_at_ms`. Returns true when this call set `answered_by`.
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
  await db.query(
    `update rt_outbound_tasks set answered_by = coalesce(answered_by, $2), updated_at = now() where session_id = $1`,
    [sessionId, a.answeredBy],
  );
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

/**
 * Moves a task on: `status` always; `callSid` fills the column once (Twilio's callbacks and the dial response
 * both carry it); `sessionId` when the callee answered; `error` when the dial failed for good.
 */
export async function updateOutboundTask(
  db: Queryable,
  id: string,
  u: { status: string; callSid?: string | null; sessionId?: string; error?: string },
): Promise<void> {
  await db.query(
    `update rt_outbound_tasks set status = $2, call_sid = coalesce(call_sid, $3),
       session_id = coalesce($4, session_id), error = coalesce($5, error), updated_at = now()
     where id = $1`,
    [id, u.status, u.callSid ?? null, u.sessionId ?? null, u.error ?? null],
  );
}

/**
 * The connect callback's session for a task, set once: false when another callback (a replay, or Twilio's retry)
 * attached one first. Keeps a replayed connect from opening a second session for one call.
 */
export async function attachTaskSession(
  db: Queryable,
  id: string,
  u: { sessionId: string; callSid: string | null },
): Promise<boolean> {
  const r = await db.query(
    `update rt_outbound_tasks set status = 'in-progress', session_id = $2, call_sid = coalesce(call_sid, $3),
       updated_at = now()
     where id = $1 and session_id is null`,
    [id, u.sessionId, u.callSid],
  );
  return r.rowCount === 1;
}

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
            t.webhook_url
       from rt_sessions s left join rt_outbound_tasks t on t.id = s.task_id where s.id = $1`,
    [sessionId],
  );
  return rows[0] ?? null;
}

/**
 * A session's status, end reason and answering-machine answer (and beep), as a subquery for one statement of another owner
 * (a campaign attempt's settlement, campaigns/store.ts): `sessionId` is its SQL expression.
 */
export function sessionOutcomeSql(sessionId: string): string {
  return `select x.status, x.end_reason, x.answered_by, x.beep_at_ms from rt_sessions x where x.id = ${sessionId}`;
}
