import { parseWav } from '../../../kernel/audio/wav.ts';
import { resamplePcm } from '../../../kernel/audio/resampler.ts';
import type { Infra } from '../../../platform/infra.ts';
import { findStartedSession } from '../../realtime/session-reads.ts';
import { loadTrace } from '../../realtime/session-trace.ts';

/** The phone line's rate: the replay's caller speaks over Twilio's 8 kHz μ-law media stream. */
export const CALLER_RATE = 8000;

export interface RecordedTurn {
  idx: number;
  speaker: 'user' | 'assistant';
  text: string;
  startMs: number;
  endMs: number;
  latencyMs: number | null;
  interrupted: boolean;
  cutIn: boolean;
}

/** A caller turn that counts: something was heard (an empty transcript was noise, not a turn). */
export const isCallerTurn = (t: RecordedTurn) => t.speaker === 'user' && t.text.trim() !== '';

/** A finished call as the platform recorded it: its trace rows and the caller's side of its stereo recording. */
export interface RecordedCall {
  sessionId: string;
  /** The CallSid, or the session id of a browser (direct) call, as recordings are addressed. */
  callId: string;
  agentId: string;
  agentVersion: number | null;
  turns: RecordedTurn[];
  /** The caller's channel (left) at 8 kHz, s16le mono; null when the call has no recording. */
  callerPcm: Buffer | null;
}

/** One developer's started call (session row) by CallSid or session id; null for none (or another developer's). */
export async function findCall(infra: Infra, developerId: string, callId: string) {
  return (
    (await findStartedSession(infra.db, developerId, { callSid: callId })) ??
    (await findStartedSession(infra.db, developerId, { id: callId }))
  );
}

/**
 * One developer's recorded call by CallSid or session id; null when there is none for that developer (another
 * developer's call reads as missing). The recording is the stereo WAV the realtime role stored (left: caller,
 * right: agent, one timeline from the session's start, the same clock as the trace rows' start/end).
 */
export async function loadRecordedCall(
  infra: Infra,
  developerId: string,
  callId: string,
): Promise<RecordedCall | null> {
  const s = await findCall(infra, developerId, callId);
  if (!s) return null;
  const trace = await loadTrace(infra.db, s.id);
  const callerPcm = s.recording_key ? callerChannel(await infra.storage.getBuffer(s.recording_key)) : null;
  return {
    sessionId: s.id,
    callId: s.call_sid ?? s.id,
    agentId: s.agent_id,
    agentVersion: s.agent_version,
    turns: trace.turns.map((t) => ({
      idx: t.idx,
      speaker: t.speaker,
      text: t.text,
      startMs: t.start_ms,
      endMs: t.end_ms,
      latencyMs: t.latency_ms,
      interrupted: t.interrupted,
      cutIn: t.suspected_cut_in,
    })),
    callerPcm,
  };
}

/** The left (caller) channel of a 16-bit stereo recording, at the phone line's rate. */
export function callerChannel(wav: Buffer): Buffer {
  const w = parseWav(wav);
  const data = Buffer.from(w.data);
  const step = w.channels * 2;
  const n = Math.floor(data.length / step);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) out.writeInt16LE(data.readInt16LE(i * step), i * 2);
  return w.sampleRate === CALLER_RATE ? out : resamplePcm(out, w.sampleRate, CALLER_RATE);
}
