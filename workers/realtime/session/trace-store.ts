import type { Db } from '../../../shared/db/pool.ts';

export interface TurnRecord {
  idx: number;
  speaker: 'user' | 'assistant';
  text: string;
  fullText?: string | null;
  startMs: number;
  endMs: number;
  sttMs?: number | null;
  llmMs?: number | null;
  ttsMs?: number | null;
  latencyMs?: number | null;
  endpointMs?: number | null;
  overheadMs?: number | null;
  interrupted?: boolean;
  error?: string | null;
}

export interface InterruptionRecord {
  turnIdx: number;
  atMs: number;
  detectionMs: number;
  stopMs: number;
  bleedWords: number;
  reason: string;
}

const r = (v: number | null | undefined) => (v === null || v === undefined ? null : Math.max(0, Math.round(v)));

/** Writes a session's trace (sessions, turns, tool executions, interruptions). Off the audio hot path. */
export class TraceStore {
  constructor(
    private readonly db: Db,
    readonly sessionId: string,
  ) {}

  /** Upsert on start: Twilio sessions exist (pending) since the TwiML; direct ones are created here. */
  async started(s: {
    developerId: string;
    agentId: string;
    channel: 'twilio' | 'direct';
    callSid?: string | null;
    streamSid?: string | null;
    sttProvider: string;
    ttsProvider: string;
    llmProvider: string;
  }): Promise<void> {
    await this.db.query(
      `insert into rt_sessions (id, developer_id, agent_id, channel, status, call_sid, stream_sid, stt_provider,
         tts_provider, llm_provider, started_at, heartbeat_at)
       values ($1, $2, $3, $4, 'active', $5, $6, $7, $8, $9, now(), now())
       on conflict (id) do update set status = 'active', call_sid = excluded.call_sid,
         stream_sid = excluded.stream_sid, stt_provider = excluded.stt_provider, tts_provider = excluded.tts_provider,
         llm_provider = excluded.llm_provider, started_at = now(), heartbeat_at = now()`,
      [
        this.sessionId,
        s.developerId,
        s.agentId,
        s.channel,
        s.callSid ?? null,
        s.streamSid ?? null,
        s.sttProvider,
        s.ttsProvider,
        s.llmProvider,
      ],
    );
  }

  async turn(t: TurnRecord): Promise<void> {
    await this.db.query(
      `insert into rt_turns (session_id, idx, speaker, text, full_text, start_ms, end_ms, stt_ms, llm_ms, tts_ms,
         latency_ms, endpoint_ms, overhead_ms, interrupted, error)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       on conflict (session_id, idx) do update set text = excluded.text, full_text = excluded.full_text,
         end_ms = excluded.end_ms, interrupted = excluded.interrupted, error = excluded.error`,
      [
        this.sessionId,
        t.idx,
        t.speaker,
        t.text,
        t.fullText ?? null,
        r(t.startMs),
        r(t.endMs),
        r(t.sttMs),
        r(t.llmMs),
        r(t.ttsMs),
        r(t.latencyMs),
        r(t.endpointMs),
        r(t.overheadMs),
        t.interrupted ?? false,
        t.error ?? null,
      ],
    );
  }

  async tool(
    turnIdx: number,
    t: { name: string; ok: boolean; error: string | null; durationMs: number; atMs: number },
  ) {
    await this.db.query(
      `insert into rt_tool_executions (session_id, turn_idx, name, ok, error, duration_ms, at_ms)
       values ($1, $2, $3, $4, $5, $6, $7)`,
      [this.sessionId, turnIdx, t.name, t.ok, t.error?.slice(0, 500) ?? null, r(t.durationMs), r(t.atMs)],
    );
  }

  async interruption(developerId: string, agentId: string, i: InterruptionRecord): Promise<void> {
    await this.db.query(
      `insert into rt_interruptions (session_id, developer_id, agent_id, turn_idx, at_ms, detection_ms, stop_ms,
         bleed_words, reason)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        this.sessionId,
        developerId,
        agentId,
        i.turnIdx,
        r(i.atMs),
        r(i.detectionMs),
        r(i.stopMs),
        i.bleedWords,
        i.reason,
      ],
    );
  }

  async ended(s: {
    status: 'completed' | 'failed';
    reason: string;
    error?: string | null;
    metrics: Record<string, number>;
    recordingKey?: string | null;
    recordingMs?: number | null;
  }): Promise<void> {
    await this.db.query(
      `update rt_sessions set status = $2, end_reason = $3, error = $4, metrics = $5, recording_key = $6,
         recording_ms = $7, ended_at = now()
       where id = $1`,
      [
        this.sessionId,
        s.status,
        s.reason,
        s.error ?? null,
        JSON.stringify(s.metrics),
        s.recordingKey ?? null,
        r(s.recordingMs),
      ],
    );
  }

  /** A session that could not start (bad engine configuration…): recorded so the developer sees why. */
  async failedToStart(reason: string, error: string): Promise<void> {
    await this.db.query(
      `update rt_sessions set status = 'failed', end_reason = $2, error = $3, ended_at = now(),
         started_at = coalesce(started_at, now()) where id = $1`,
      [this.sessionId, reason, error.slice(0, 1000)],
    );
  }
}
