import type { CallAnalysis, TakenMessage } from '../../contracts/call-analysis.ts';
import type { SessionEndReason, SessionKind } from '../../contracts/sessions.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import type { AnsweredBy } from './amd/detector.ts';
import type { TransferRecord } from './sessions.ts';

/**
 * The observability reads over sessions and their trace rows (rt_sessions with rt_turns and rt_interruptions):
 * the calls list, one session, interruption and cut-in statistics, a call's recording. Writes are in sessions.ts
 * and session-trace.ts.
 */

export interface SessionRow {
  id: string;
  agent_id: string;
  kind: SessionKind;
  status: string;
  channel: string;
  call_sid: string | null;
  started_at: Date | null;
  ended_at: Date | null;
  recording_key: string | null;
  /** One of SessionEndReason: the column's CHECK admits nothing else. */
  end_reason?: SessionEndReason | null;
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
  /** The post-call analysis and a message taken (findStartedSession only). */
  analysis?: CallAnalysis | null;
  taken_message?: TakenMessage | null;
}

/**
 * A session's kind (SESSION_KINDS): the label what drove the call stored (a test, a replay, a campaign's attempt:
 * `labelSessionKind` and the start), else told by channel and direction.
 */
const KIND_SQL = `coalesce(s.kind, case when s.channel = 'direct' then 'browser'
    when s.direction = 'outbound' then 'outbound' else 'inbound' end)`;

/** Sessions that started (pending ones that never connected are not traces), newest first, one extra for paging. */
export async function listStartedSessions(
  db: Queryable,
  developerId: string,
  q: { agentId?: string; kind?: SessionKind; endReason?: SessionEndReason; after: string | null; limit: number },
): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `select * from (
       select s.id, s.agent_id, s.status, s.channel, s.call_sid, s.started_at, s.ended_at, s.recording_key,
              s.end_reason, s.error, s.answered_by, s.beep_at_ms, s.agent_version, ${KIND_SQL} as kind
         from rt_sessions s
        where s.developer_id = $1 and s.started_at is not null
          and ($2::text is null or s.agent_id = $2) and ($3::text is null or s.id < $3)
          and ($5::text is null or s.end_reason = $5)
     ) k
     where ($6::text is null or k.kind = $6)
     order by k.id desc limit $4`,
    [developerId, q.agentId ?? null, q.after, q.limit + 1, q.endReason ?? null, q.kind ?? null],
  );
  if (!rows.length) return rows;
  // Turn counts for the page only (not for every row the kind filter looked at).
  const counts = await db.query<{ session_id: string; n: number }>(
    `select session_id, count(*)::int as n from rt_turns where session_id = any($1) group by session_id`,
    [rows.map((r) => r.id)],
  );
  const n = new Map(counts.rows.map((c) => [c.session_id, c.n]));
  for (const r of rows) r.turns = n.get(r.id) ?? 0;
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
            s.agent_version, s.analysis, s.taken_message, 0 as turns, ${KIND_SQL} as kind
       from rt_sessions s
      where s.developer_id = $1 and s.started_at is not null
        and ${by.id ? 's.id = $2' : 's.call_sid = $2'}
      order by s.id desc limit 1`,
    [developerId, by.id ?? by.callSid],
  );
  return rows[0] ?? null;
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
