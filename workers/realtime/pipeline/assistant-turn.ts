import type { LlmMessage } from '../../../shared/engines/llm/types.ts';
import type { Frame, TurnRecord } from './frames.ts';
import { turnStageLatency } from '../../../shared/kernel/observability/metrics.ts';

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
  /**
   * A prepared reply (started before the caller's turn was confirmed): its output frames wait here, unheard, until
   * the turn is confirmed (then they play) or dropped (then nothing of it is played, stored or billed). null once
   * confirmed, and for replies started after the endpoint.
   */
  held: Frame[] | null;
  /** LLM text characters this reply produced (a dropped reply's waste). */
  llmChars: number;
  /** The caller went on speaking within CUT_IN_WINDOW_MS of this reply's first audio (see suspectCutIn). */
  suspectedCutIn: boolean;
}

/** Caller speech that starts this soon after a reply's first audio suggests the agent took a pause for the end. */
export const CUT_IN_WINDOW_MS = 500;

/**
 * Marks `t` as a suspected cut-in when caller speech that interrupted it began (`onsetAt`, session clock) no later
 * than CUT_IN_WINDOW_MS after its first audio went out — or before, the caller already speaking again. Only for a
 * reply to caller speech that was heard at all.
 */
export function suspectCutIn(t: AssistantTurn, onsetAt: number): void {
  if (t.lastSpeechAt === null || t.firstSendAt === null) return;
  if (onsetAt - t.firstSendAt <= CUT_IN_WINDOW_MS) t.suspectedCutIn = true;
}

/** A reply about to be made, dispatched `now` (session clock), answering `userText` ('' for the greeting). */
export function assistantTurn(
  id: string,
  idx: number,
  now: number,
  to: { userText: string; lastSpeechAt: number | null; endpointAt: number | null },
): AssistantTurn {
  return {
    id,
    idx,
    fullText: '',
    startedAt: now,
    lastSpeechAt: to.lastSpeechAt,
    endpointWaitMs: 0,
    vadLagMs: 0,
    endpointAt: to.endpointAt,
    dispatchAt: now,
    firstTokenAt: null,
    synthStartAt: null,
    firstAudioAt: null,
    firstSendAt: null,
    llmDone: false,
    error: null,
    kept: [],
    userText: to.userText,
    closed: false,
    held: null,
    llmChars: 0,
    suspectedCutIn: false,
  };
}

/**
 * The trace row of a closed reply, and (for a reply to speech) its latency broken into stages for the debug log.
 * latency = caller's last speech → first agent audio sent; overhead = latency minus the endpointing wait, the
 * STT wait, the LLM stage (request → first sentence) and the TTS stage (synthesis → first audio).
 */
export function assistantTurnRecord(
  t: AssistantTurn,
  end: { spoken: string; interrupted: boolean; now: number },
): { record: TurnRecord; timing: Record<string, number | null> | null } {
  const answered = t.lastSpeechAt !== null && t.firstSendAt !== null;
  const sttWait = t.endpointAt !== null ? Math.max(0, t.dispatchAt - t.endpointAt) : 0;
  const llmStage = t.synthStartAt !== null ? t.synthStartAt - t.dispatchAt : null;
  const ttsStage = t.firstAudioAt !== null && t.synthStartAt !== null ? t.firstAudioAt - t.synthStartAt : null;
  const latency = answered ? t.firstSendAt! - t.lastSpeechAt! : null;
  const record: TurnRecord = {
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
    suspectedCutIn: t.suspectedCutIn,
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

/** The reply's first audio went out: its latency and stage times into the `turn_stage_latency_seconds` histogram. */
export function observeTurnStages(t: AssistantTurn): void {
  if (t.lastSpeechAt === null || t.firstSendAt === null) return;
  turnStageLatency.observe({ stage: 'turn_total' }, (t.firstSendAt - t.lastSpeechAt) / 1000);
  if (t.firstTokenAt !== null)
    turnStageLatency.observe({ stage: 'llm_first_token' }, (t.firstTokenAt - t.dispatchAt) / 1000);
  if (t.firstAudioAt !== null && t.synthStartAt !== null)
    turnStageLatency.observe({ stage: 'tts_first_audio' }, (t.firstAudioAt - t.synthStartAt) / 1000);
  turnStageLatency.observe({ stage: 'vad_endpoint' }, t.endpointWaitMs / 1000);
}

/** The session's summary metrics (stored on the session row and logged when it ends). */
export function sessionMetrics(
  turns: TurnRecord[],
  counts: {
    durationMs: number;
    toolExecutions: number;
    interruptions: number;
    sttAudioSeconds: number;
    ttsCharacters: number;
    llmTokens: number;
    /** Replies prepared before the endpoint: played, and dropped with what they had cost. */
    prepared: {
      confirmed: number;
      dropped: number;
      llmChars: number;
      ttsChars: number;
      /** Why they were dropped (prepared-reply.ts's DropReasons; typed here so the two files import one way). */
      droppedBy?: { wentOn: number; wordsChanged: number; finalDiffers: number };
    };
  },
) {
  const latencies = turns.map((x) => x.latencyMs).filter((v): v is number => typeof v === 'number');
  return {
    totalDurationMs: Math.round(counts.durationMs),
    avgTurnLatencyMs: latencies.length ? Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length) : 0,
    toolExecutions: counts.toolExecutions,
    interruptions: counts.interruptions,
    turns: turns.length,
    sttAudioSeconds: Math.round(counts.sttAudioSeconds * 10) / 10,
    ttsCharacters: counts.ttsCharacters,
    llmTokens: counts.llmTokens,
    preparedReplies: counts.prepared.confirmed,
    preparedRepliesDropped: counts.prepared.dropped,
    // Output tokens of dropped replies, estimated at 4 characters a token (an aborted stream reports no usage);
    // the developer is billed only the usage a vendor reported.
    droppedLlmTokens: Math.ceil(counts.prepared.llmChars / 4),
    droppedTtsCharacters: counts.prepared.ttsChars,
    // Why prepared replies were dropped (issue 25): the caller went on, newer words, the final differed.
    preparedDroppedWentOn: counts.prepared.droppedBy?.wentOn ?? 0,
    preparedDroppedWordsChanged: counts.prepared.droppedBy?.wordsChanged ?? 0,
    preparedDroppedFinalDiffers: counts.prepared.droppedBy?.finalDiffers ?? 0,
  };
}
