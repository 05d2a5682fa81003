import type { Turn } from '../types.ts';

/** The stages of one reply, in the order they happen after the caller stops speaking. */
export const STAGES = [
  { key: 'endpoint', label: 'Endpointing wait' },
  { key: 'stt', label: 'STT' },
  { key: 'llm', label: 'LLM first token' },
  { key: 'tts', label: 'TTS first audio' },
  { key: 'overhead', label: 'Platform overhead' },
] as const;
export type StageKey = (typeof STAGES)[number]['key'];

export interface WaterfallRow {
  turn: number;
  text: string;
  latencyMs: number;
  interrupted: boolean;
  /** `measured`: the stage ran and was timed (a local engine's sub-millisecond LLM stage is still a stage). */
  segments: Array<{ key: StageKey; startMs: number; ms: number; measured: boolean }>;
  /** LLM first token, when it came before the first speakable sentence (the LLM bar runs to the sentence). */
  firstTokenMs: number | null;
}

/**
 * Rows for assistant turns that answered speech (latency known). The trace's overhead is computed with the LLM
 * stage measured to the first sentence handed to TTS, so the LLM bar takes latency minus the other four stages
 * (the bars then add up to the measured latency); the first-token time is marked inside it.
 */
export function waterfallRows(turns: Turn[]): WaterfallRow[] {
  const rows: WaterfallRow[] = [];
  for (const t of turns) {
    if (t.speaker !== 'assistant' || t.latencyMs === undefined) continue;
    const endpoint = Math.max(0, t.endpointMs ?? 0);
    const stt = Math.max(0, t.sttMs);
    const tts = Math.max(0, t.ttsMs);
    const overhead = Math.max(0, t.overheadMs ?? 0);
    const llm = Math.max(0, t.latencyMs - endpoint - stt - tts - overhead);
    const sizes: Record<StageKey, number> = { endpoint, stt, llm, tts, overhead };
    // Endpointing and overhead are absent from some traces (a batch STT has no endpointing window); the other
    // three run on every reply to speech, however short they were.
    const measured: Record<StageKey, boolean> = {
      endpoint: t.endpointMs !== undefined,
      stt: true,
      llm: true,
      tts: true,
      overhead: t.overheadMs !== undefined,
    };
    let at = 0;
    const segments = STAGES.map((s) => {
      const seg = { key: s.key, startMs: at, ms: sizes[s.key], measured: measured[s.key] };
      at += sizes[s.key];
      return seg;
    });
    rows.push({
      turn: t.index,
      text: t.text,
      latencyMs: t.latencyMs,
      interrupted: t.interrupted,
      segments,
      firstTokenMs: t.llmMs > 0 ? endpoint + stt + Math.min(t.llmMs, llm) : null,
    });
  }
  return rows;
}
