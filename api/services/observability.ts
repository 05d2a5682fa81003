import type {
  InterruptionQuality,
  RootCauseReport,
  SessionDetail,
  SessionSummary,
} from '../../shared/contracts/sessions.ts';
import { ApiError } from '../../shared/errors/api-error.ts';
import { decodeCursor, toPage, type Page } from '../../shared/pagination.ts';
import type { Infra } from '../../shared/runtime/infra.ts';
import { rootCause, type TraceInterruption, type TraceTool, type TraceTurn } from './observability-rules.ts';

interface SessionRow {
  id: string;
  agent_id: string;
  status: string;
  channel: string;
  call_sid: string | null;
  started_at: Date | null;
  ended_at: Date | null;
  recording_key: string | null;
  end_reason?: string | null;
  turns: number;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Sessions that started (pending ones that never connected are not traces). Newest first. */
export async function listSessions(
  infra: Infra,
  developerId: string,
  q: { agentId?: string; limit: number; cursor?: string },
): Promise<Page<SessionSummary>> {
  const after = decodeCursor(q.cursor);
  const { rows } = await infra.db.query<SessionRow>(
    `select s.id, s.agent_id, s.status, s.channel, s.call_sid, s.started_at, s.ended_at, s.recording_key,
            (select count(*)::int from rt_turns t where t.session_id = s.id) as turns
       from rt_sessions s
      where s.developer_id = $1 and s.started_at is not null
        and ($2::text is null or s.agent_id = $2) and ($3::text is null or s.id < $3)
      order by s.id desc limit $4`,
    [developerId, q.agentId ?? null, after, q.limit + 1],
  );
  return toPage(rows, q.limit, (r) => ({
    id: r.id,
    agentId: r.agent_id,
    startedAt: iso(r.started_at),
    endedAt: iso(r.ended_at),
    turns: r.turns,
    status: r.status,
    channel: r.channel,
    callId: r.call_sid,
  }));
}

async function findSession(infra: Infra, developerId: string, by: { id?: string; callSid?: string }) {
  const { rows } = await infra.db.query<SessionRow>(
    `select s.id, s.agent_id, s.status, s.channel, s.call_sid, s.started_at, s.ended_at, s.recording_key,
            s.end_reason, 0 as turns
       from rt_sessions s
      where s.developer_id = $1 and s.started_at is not null
        and ${by.id ? 's.id = $2' : 's.call_sid = $2'}
      order by s.id desc limit 1`,
    [developerId, by.id ?? by.callSid],
  );
  const row = rows[0];
  if (!row) throw by.id ? ApiError.notFound('session', by.id) : ApiError.notFound('call', by.callSid ?? '');
  return row;
}

async function loadTrace(infra: Infra, sessionId: string) {
  const [turns, tools, interruptions] = await Promise.all([
    infra.db.query<TraceTurn>(
      `select idx, speaker, text, start_ms, end_ms, stt_ms, llm_ms, tts_ms, latency_ms, endpoint_ms, overhead_ms, interrupted, error
         from rt_turns where session_id = $1 order by idx`,
      [sessionId],
    ),
    infra.db.query<TraceTool & { at_ms: number }>(
      `select turn_idx, name, ok, error, duration_ms, at_ms from rt_tool_executions where session_id = $1 order by id`,
      [sessionId],
    ),
    infra.db.query<TraceInterruption & { detection_ms: number }>(
      `select turn_idx, at_ms, detection_ms, stop_ms, bleed_words from rt_interruptions where session_id = $1 order by id`,
      [sessionId],
    ),
  ]);
  return { turns: turns.rows, tools: tools.rows, interruptions: interruptions.rows };
}

export async function sessionDetail(
  infra: Infra,
  developerId: string,
  by: { id?: string; callSid?: string },
): Promise<SessionDetail> {
  const s = await findSession(infra, developerId, by);
  const { turns, tools, interruptions } = await loadTrace(infra, s.id);
  const latencies = turns.map((t) => t.latency_ms).filter((v): v is number => v !== null);
  const end = s.ended_at ?? new Date();
  return {
    id: s.id,
    agentId: s.agent_id,
    status: s.status,
    channel: s.channel,
    callId: s.call_sid,
    startedAt: iso(s.started_at),
    endedAt: iso(s.ended_at),
    turns: turns.map((t) => ({
      index: t.idx,
      speaker: t.speaker,
      text: t.text,
      startMs: t.start_ms,
      endMs: t.end_ms,
      sttMs: t.stt_ms ?? 0,
      llmMs: t.llm_ms ?? 0,
      ttsMs: t.tts_ms ?? 0,
      latencyMs: t.latency_ms,
      endpointMs: t.endpoint_ms,
      overheadMs: t.overhead_ms ?? null,
      interrupted: t.interrupted,
    })),
    metrics: {
      totalDurationMs: s.started_at ? Math.max(0, end.getTime() - s.started_at.getTime()) : 0,
      avgTurnLatencyMs: latencies.length ? Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length) : 0,
      toolExecutions: tools.length,
      interruptions: interruptions.length,
    },
    toolExecutions: tools.map((t) => ({
      turn: t.turn_idx,
      name: t.name,
      ok: t.ok,
      error: t.error,
      durationMs: t.duration_ms,
      atMs: t.at_ms,
    })),
    interruptions: interruptions.map((i) => ({
      turn: i.turn_idx,
      atMs: i.at_ms,
      detectionMs: i.detection_ms,
      stopMs: i.stop_ms,
      bleedThroughWords: i.bleed_words,
    })),
    // Direct (browser) sessions have no CallSid: their recording is addressed by the session id (see recordingKey).
    recordingUrl: s.recording_key ? `/v1/recordings/${encodeURIComponent(s.call_sid ?? s.id)}` : null,
  };
}

export async function sessionRootCause(
  infra: Infra,
  developerId: string,
  by: { id?: string; callSid?: string },
): Promise<RootCauseReport> {
  const s = await findSession(infra, developerId, by);
  const { turns, tools, interruptions } = await loadTrace(infra, s.id);
  return {
    sessionId: s.id,
    callId: s.call_sid,
    issues: rootCause(turns, tools, interruptions, { endReason: s.end_reason ?? null }),
  };
}

export async function interruptionQuality(
  infra: Infra,
  developerId: string,
  q: { agentId?: string; from?: string; to?: string },
): Promise<InterruptionQuality> {
  const params = [developerId, q.agentId ?? null, q.from ?? null, q.to ?? null];
  const [agg, sessions] = await Promise.all([
    infra.db.query<{
      n: number;
      d_avg: number | null;
      d_p50: number | null;
      d_p95: number | null;
      s_avg: number | null;
      s_p50: number | null;
      s_p95: number | null;
      b_avg: number | null;
      b_p50: number | null;
      b_p95: number | null;
      b_total: number | null;
    }>(
      `select count(*)::int as n,
              avg(detection_ms)::float8 as d_avg,
              percentile_cont(0.5) within group (order by detection_ms)::float8 as d_p50,
              percentile_cont(0.95) within group (order by detection_ms)::float8 as d_p95,
              avg(stop_ms)::float8 as s_avg,
              percentile_cont(0.5) within group (order by stop_ms)::float8 as s_p50,
              percentile_cont(0.95) within group (order by stop_ms)::float8 as s_p95,
              avg(bleed_words)::float8 as b_avg,
              percentile_cont(0.5) within group (order by bleed_words)::float8 as b_p50,
              percentile_cont(0.95) within group (order by bleed_words)::float8 as b_p95,
              sum(bleed_words)::int as b_total
         from rt_interruptions
        where developer_id = $1 and ($2::text is null or agent_id = $2)
          and ($3::timestamptz is null or created_at >= $3) and ($4::timestamptz is null or created_at < $4)`,
      params,
    ),
    infra.db.query<{ n: number }>(
      `select count(*)::int as n from rt_sessions
        where developer_id = $1 and started_at is not null and ($2::text is null or agent_id = $2)
          and ($3::timestamptz is null or started_at >= $3) and ($4::timestamptz is null or started_at < $4)`,
      params,
    ),
  ]);
  const a = agg.rows[0]!;
  const r = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
  const nSessions = sessions.rows[0]?.n ?? 0;
  return {
    agentId: q.agentId ?? null,
    from: q.from ?? null,
    to: q.to ?? null,
    sessions: nSessions,
    interruptions: a.n,
    interruptionsPerSession: nSessions ? Math.round((a.n / nSessions) * 100) / 100 : 0,
    detectionLatencyMs: { avg: r(a.d_avg), p50: r(a.d_p50), p95: r(a.d_p95) },
    stopLatencyMs: { avg: r(a.s_avg), p50: r(a.s_p50), p95: r(a.s_p95) },
    bleedThroughWords: { avg: r(a.b_avg), p50: r(a.b_p50), p95: r(a.b_p95), total: a.b_total ?? 0 },
  };
}

/** The stereo WAV of a call (left = caller, right = agent), by Twilio CallSid or, for direct sessions, session id. */
export async function recordingKey(infra: Infra, developerId: string, callSid: string): Promise<string> {
  const { rows } = await infra.db.query<{ recording_key: string | null }>(
    `select recording_key from rt_sessions
      where developer_id = $1 and (call_sid = $2 or id = $2) and recording_key is not null order by id desc limit 1`,
    [developerId, callSid],
  );
  const key = rows[0]?.recording_key;
  if (!key) throw ApiError.notFound('recording', callSid);
  return key;
}
