import type { Db } from '../../../shared/kernel/db/pool.ts';
import { insertInterruption, insertToolExecution, upsertTurn } from '../../../shared/domains/realtime/session-trace.ts';
import {
  markSessionEnded,
  markSessionFailedToStart,
  markSessionStarted,
  type SessionEnd,
  type StartedSession,
} from '../../../shared/domains/realtime/sessions.ts';
import type { InterruptionRecord, TurnRecord } from '../pipeline/frames.ts';

const ms = (v: number) => Math.max(0, Math.round(v));
const r = (v: number | null | undefined) => (v === null || v === undefined ? null : ms(v));

/** Writes a session's trace (sessions, turns, tool executions, interruptions) through the realtime store. */
export class TraceStore {
  constructor(
    private readonly db: Db,
    readonly sessionId: string,
  ) {}

  async started(s: StartedSession): Promise<void> {
    await markSessionStarted(this.db, this.sessionId, s);
  }

  async turn(t: TurnRecord): Promise<void> {
    await upsertTurn(this.db, this.sessionId, {
      idx: t.idx,
      speaker: t.speaker,
      text: t.text,
      full_text: t.fullText ?? null,
      start_ms: ms(t.startMs),
      end_ms: ms(t.endMs),
      stt_ms: r(t.sttMs),
      llm_ms: r(t.llmMs),
      tts_ms: r(t.ttsMs),
      latency_ms: r(t.latencyMs),
      endpoint_ms: r(t.endpointMs),
      overhead_ms: r(t.overheadMs),
      interrupted: t.interrupted ?? false,
      error: t.error ?? null,
      suspected_cut_in: t.suspectedCutIn ?? false,
      stt_engine: t.sttEngine ?? null,
    });
  }

  async tool(
    turnIdx: number,
    t: { name: string; ok: boolean; error: string | null; durationMs: number; atMs: number },
  ) {
    await insertToolExecution(this.db, this.sessionId, {
      turn_idx: turnIdx,
      name: t.name,
      ok: t.ok,
      error: t.error?.slice(0, 500) ?? null,
      duration_ms: ms(t.durationMs),
      at_ms: ms(t.atMs),
    });
  }

  async interruption(developerId: string, agentId: string, i: InterruptionRecord): Promise<void> {
    await insertInterruption(
      this.db,
      { sessionId: this.sessionId, developerId, agentId, reason: i.reason },
      {
        turn_idx: i.turnIdx,
        at_ms: ms(i.atMs),
        detection_ms: ms(i.detectionMs),
        stop_ms: ms(i.stopMs),
        bleed_words: i.bleedWords,
      },
    );
  }

  async ended(s: {
    status: 'completed' | 'failed';
    reason: SessionEnd['reason'];
    error?: string | null;
    metrics: Record<string, number>;
    recordingKey?: string | null;
    recordingMs?: number | null;
  }): Promise<void> {
    await markSessionEnded(this.db, this.sessionId, {
      status: s.status,
      reason: s.reason,
      error: s.error ?? null,
      metrics: s.metrics,
      recordingKey: s.recordingKey ?? null,
      recordingMs: r(s.recordingMs),
    });
  }

  /** A session that could not start (bad engine configuration…): recorded so the developer sees why. */
  async failedToStart(reason: Parameters<typeof markSessionFailedToStart>[2], error: string): Promise<void> {
    await markSessionFailedToStart(this.db, this.sessionId, reason, error);
  }
}
