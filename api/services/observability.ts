import type {
  CutInRates,
  InterruptionQuality,
  RootCauseReport,
  SessionDetail,
  SessionEndReason,
  SessionKind,
  SessionSummary,
} from '../../shared/contracts/sessions.ts';
import { ifDate, ifSet } from '../../shared/contracts/absent.ts';
import { LLM_PROVIDER_LABELS } from '../../shared/contracts/providers.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { decodeCursor, toPage, type Page } from '../../shared/kernel/pagination.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import {
  cutInStats,
  findStartedSession,
  interruptionStats,
  type InterruptionStats,
  latestRecordingKey,
  listStartedSessions,
} from '../../shared/domains/realtime/session-reads.ts';
import { loadTrace } from '../../shared/domains/realtime/session-trace.ts';
import { requestCost } from '../../shared/platform/metering/ledger-reads.ts';
import { rootCause } from '../../shared/domains/realtime/root-cause.ts';

/** Sessions that started (pending ones that never connected are not traces). Newest first. */
export async function listSessions(
  infra: Infra,
  developerId: string,
  q: { agentId?: string; kind?: SessionKind; endReason?: SessionEndReason; limit: number; cursor?: string },
): Promise<Page<SessionSummary>> {
  const after = decodeCursor(q.cursor);
  const { agentId, kind, endReason, limit } = q;
  const rows = await listStartedSessions(infra.db, developerId, { agentId, kind, endReason, after, limit });
  return toPage(rows, q.limit, (r) => ({
    id: r.id,
    agentId: r.agent_id,
    kind: r.kind,
    ...ifDate('startedAt', r.started_at),
    ...ifDate('endedAt', r.ended_at),
    turns: r.turns,
    status: r.status,
    channel: r.channel,
    ...ifSet('callId', r.call_sid),
    ...ifSet('answeredBy', r.answered_by),
    ...(r.end_reason ? { endReason: r.end_reason } : {}),
    ...(r.status === 'failed' && r.error ? { error: r.error } : {}),
    ...ifSet('agentVersion', r.agent_version),
  }));
}

async function findSession(infra: Infra, developerId: string, by: { id?: string; callSid?: string }) {
  const row = await findStartedSession(infra.db, developerId, by);
  if (!row) throw by.id ? ApiError.notFound('session', by.id) : ApiError.notFound('call', by.callSid ?? '');
  return row;
}

export async function sessionDetail(
  infra: Infra,
  developerId: string,
  by: { id?: string; callSid?: string },
): Promise<SessionDetail> {
  const s = await findSession(infra, developerId, by);
  const [{ turns, tools, interruptions }, cost] = await Promise.all([
    loadTrace(infra.db, s.id),
    requestCost(infra.db, developerId, s.id),
  ]);
  const latencies = turns.map((t) => t.latency_ms).filter((v): v is number => v !== null);
  const end = s.ended_at ?? new Date();
  return {
    id: s.id,
    agentId: s.agent_id,
    kind: s.kind,
    status: s.status,
    channel: s.channel,
    ...ifSet('callId', s.call_sid),
    ...ifDate('startedAt', s.started_at),
    ...ifDate('endedAt', s.ended_at),
    turns: turns.map((t) => ({
      index: t.idx,
      speaker: t.speaker,
      text: t.text,
      startMs: t.start_ms,
      endMs: t.end_ms,
      sttMs: t.stt_ms ?? 0,
      llmMs: t.llm_ms ?? 0,
      ttsMs: t.tts_ms ?? 0,
      ...ifSet('latencyMs', t.latency_ms),
      ...ifSet('endpointMs', t.endpoint_ms),
      ...ifSet('overheadMs', t.overhead_ms),
      interrupted: t.interrupted,
      // The whole reply beside what was heard of it, when the caller cut it short.
      ...(t.interrupted && t.full_text && t.full_text !== t.text ? { fullText: t.full_text } : {}),
      suspectedCutIn: t.suspected_cut_in,
      ...ifSet('sttEngine', t.stt_engine),
    })),
    metrics: {
      totalDurationMs: s.started_at ? Math.max(0, end.getTime() - s.started_at.getTime()) : 0,
      avgTurnLatencyMs: latencies.length ? Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length) : 0,
      toolExecutions: tools.length,
      interruptions: interruptions.length,
      suspectedCutIns: turns.filter((t) => t.suspected_cut_in).length,
    },
    toolExecutions: tools.map((t) => ({
      turn: t.turn_idx,
      name: t.name,
      ok: t.ok,
      ...ifSet('error', t.error),
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
    ...ifSet('recordingUrl', s.recording_key && `/v1/recordings/${encodeURIComponent(s.call_sid ?? s.id)}`),
    ...ifSet('endReason', s.end_reason),
    ...ifSet('answeredBy', s.answered_by),
    ...ifSet('agentVersion', s.agent_version),
    ...ifSet('beepAtMs', s.beep_at_ms),
    ...(s.transfer
      ? { transfer: { target: s.transfer.target, to: s.transfer.to, mode: s.transfer.mode, atMs: s.transfer.atMs } }
      : {}),
    ...(s.llm_provider
      ? {
          engines: {
            stt: s.stt_provider ?? '',
            tts: s.tts_provider ?? '',
            llm: s.llm_provider,
            llmLabel: (LLM_PROVIDER_LABELS as Record<string, string>)[s.llm_provider] ?? s.llm_provider,
          },
        }
      : {}),
    cost,
    ...ifSet('analysis', s.analysis),
    ...ifSet('takenMessage', s.taken_message),
  };
}

export async function sessionRootCause(
  infra: Infra,
  developerId: string,
  by: { id?: string; callSid?: string },
): Promise<RootCauseReport> {
  const s = await findSession(infra, developerId, by);
  const { turns, tools, interruptions } = await loadTrace(infra.db, s.id);
  return {
    sessionId: s.id,
    ...ifSet('callId', s.call_sid),
    issues: rootCause(turns, tools, interruptions, { endReason: s.end_reason ?? null }),
  };
}

export async function interruptionQuality(
  infra: Infra,
  developerId: string,
  q: { agentId?: string; from?: string; to?: string },
): Promise<InterruptionQuality> {
  const [a, cuts] = await Promise.all([
    interruptionStats(infra.db, developerId, q),
    cutInStats(infra.db, developerId, q),
  ]);
  const replies = cuts.reduce((n, c) => n + c.replies, 0);
  const suspected = cuts.reduce((n, c) => n + c.suspected, 0);
  const r = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
  const triple = ([avg, p50, p95]: InterruptionStats['stop']) => ({ avg: r(avg), p50: r(p50), p95: r(p95) });
  const nSessions = a.sessions;
  return {
    ...ifSet('agentId', q.agentId),
    ...ifSet('from', q.from),
    ...ifSet('to', q.to),
    sessions: nSessions,
    interruptions: a.n,
    interruptionsPerSession: nSessions ? Math.round((a.n / nSessions) * 100) / 100 : 0,
    detectionLatencyMs: triple(a.detection),
    stopLatencyMs: triple(a.stop),
    bleedThroughWords: { ...triple(a.bleed), total: a.bleedTotal },
    suspectedCutIns: { replies, suspected, rate: cutRate(suspected, replies) },
  };
}

/** A share as a fraction with 4 decimals (0.0123 = 1.23 %); 0 when there were no replies. */
const cutRate = (suspected: number, replies: number) => (replies ? Math.round((suspected / replies) * 1e4) / 1e4 : 0);

/** Suspected cut-ins per agent over sessions that started in [from, to) (issue 25). */
export async function cutInRates(
  infra: Infra,
  developerId: string,
  q: { agentId?: string; from?: string; to?: string },
): Promise<CutInRates> {
  const rows = await cutInStats(infra.db, developerId, q);
  return {
    ...ifSet('from', q.from),
    ...ifSet('to', q.to),
    data: rows.map((r) => ({
      agentId: r.agent_id,
      replies: r.replies,
      suspectedCutIns: r.suspected,
      rate: cutRate(r.suspected, r.replies),
    })),
  };
}

/** The stereo WAV of a call (left = caller, right = agent), by Twilio CallSid or, for direct sessions, session id. */
export async function recordingKey(infra: Infra, developerId: string, callSid: string): Promise<string> {
  const key = await latestRecordingKey(infra.db, developerId, callSid);
  if (!key) throw ApiError.notFound('recording', callSid);
  return key;
}
