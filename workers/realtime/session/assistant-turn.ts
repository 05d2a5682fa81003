import type { LlmMessage } from '../../../shared/engines/llm/types.ts';
import type { TraceStore } from './trace-store.ts';

/** One agent reply: its text, its kept tool messages and the session-clock times the trace is made from. */
export interface AssistantTurn {
  id: string;
  idx: number;
  fullText: string;
  startedAt: number;
  lastSpeechAt: number | null;
  /** The designed endpointing wait of the utterance this answers (audio time). */
  endpointWaitMs: number;
  endpointAt: number | null;
  /** How late the VAD reported the endpoint relative to the audio clock (processing lag). */
  vadLagMs: number;
  dispatchAt: number;
  firstTokenAt: number | null;
  synthStartAt: number | null;
  firstAudioAt: number | null;
  firstSendAt: number | null;
  llmDone: boolean;
  error: string | null;
  kept: LlmMessage[];
  userText: string;
  closed: boolean;
}

type TurnRow = Parameters<TraceStore['turn']>[0];

/**
 * The trace row of a closed reply, and (for a reply to speech) its latency broken into stages for the debug log.
 * latency = caller's last speech → first agent audio sent; overhead = latency minus the endpointing wait, the
 * STT wait, the LLM stage (request → first sentence) and the TTS stage (synthesis → first audio).
 */
export function assistantTurnRecord(
  t: AssistantTurn,
  end: { spoken: string; interrupted: boolean; now: number },
): { record: TurnRow; timing: Record<string, number | null> | null } {
  const answered = t.lastSpeechAt !== null && t.firstSendAt !== null;
  const sttWait = t.endpointAt !== null ? Math.max(0, t.dispatchAt - t.endpointAt) : 0;
  const llmStage = t.synthStartAt !== null ? t.synthStartAt - t.dispatchAt : null;
  const ttsStage = t.firstAudioAt !== null && t.synthStartAt !== null ? t.firstAudioAt - t.synthStartAt : null;
  const latency = answered ? t.firstSendAt! - t.lastSpeechAt! : null;
  const record: TurnRow = {
    idx: t.idx,
    speaker: 'assistant',
    text: end.spoken,
    fullText: t.fullText,
    startMs: t.firstSendAt ?? t.startedAt,
    endMs: end.now,
    sttMs: sttWait,
    llmMs: t.firstTokenAt !== null ? t.firstTokenAt - t.dispatchAt : null,
    ttsMs: ttsStage,
    latencyMs: latency,
    endpointMs: t.lastSpeechAt !== null ? t.endpointWaitMs : null,
    overheadMs:
      latency !== null && llmStage !== null && ttsStage !== null
        ? Math.max(0, latency - t.endpointWaitMs - sttWait - llmStage - ttsStage)
        : null,
    interrupted: end.interrupted,
    error: t.error,
  };
  const round = (v: number | null) => (v === null ? null : Math.round(v));
  const timing =
    latency === null
      ? null
      : {
          turn: t.idx,
          latency: round(latency),
          vadLag: round(t.vadLagMs),
          sttWait: round(sttWait),
          llm: round(llmStage),
          tts: round(ttsStage),
          send: t.firstAudioAt === null ? null : round(t.firstSendAt! - t.firstAudioAt),
        };
  return { record, timing };
}
