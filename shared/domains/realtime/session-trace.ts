import type { Queryable } from '../../kernel/db/pool.ts';

/**
 * Every statement on a session's trace rows: its turns (rt_turns), tool executions (rt_tool_executions) and
 * interruptions (rt_interruptions), written as the session runs and read back whole. Reads over many sessions
 * (lists, statistics) are in session-reads.ts.
 */

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
  /** Caller turns of a call whose STT can fall back: the engine whose final made the turn (null otherwise). */
  stt_engine?: string | null;
}

export async function upsertTurn(db: Queryable, sessionId: string, t: TurnRow): Promise<void> {
  await db.query(
    `insert into rt_turns (session_id, idx, speaker, text, full_text, start_ms, end_ms, stt_ms, llm_ms, tts_ms,
       latency_ms, endpoint_ms, overhead_ms, interrupted, error, suspected_cut_in, stt_engine)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
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
      t.stt_engine ?? null,
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

/** A session's whole trace, in order: its turns, tool executions and interruptions. */
export async function loadTrace(db: Queryable, sessionId: string) {
  const [turns, tools, interruptions] = await Promise.all([
    db.query<TurnRow>(
      `select idx, speaker, text, full_text, start_ms, end_ms, stt_ms, llm_ms, tts_ms, latency_ms, endpoint_ms, overhead_ms,
              interrupted, error, suspected_cut_in, stt_engine
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
