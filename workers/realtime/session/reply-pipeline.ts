import type { ToolCallRecord } from '../../../shared/kernel/contracts/agents.ts';
import type { LlmMessage } from '../../../shared/engines/llm/types.ts';
import type { Frame } from '../pipeline/frames.ts';
import { LlmStage } from '../pipeline/llm-stage.ts';
import { SentenceStage } from '../pipeline/sentence-stage.ts';
import { Pipeline } from '../pipeline/stage.ts';
import { TtsStage } from '../pipeline/tts-stage.ts';
import type { AssistantTurn } from './assistant-turn.ts';
import type { SessionInit } from './types.ts';

/** What the reply side reads from and reports to the session. */
export interface ReplyHost {
  now(): number;
  history(): LlmMessage[];
  /** The reply a frame belongs to, while it is the current one (frames of a replaced reply are dropped). */
  turn(turnId: string): AssistantTurn | null;
  toolExecuted(turnId: string, rec: ToolCallRecord): void;
  llmTokens(n: number): void;
  /** Agent audio sent but not yet played, for pacing synthesis. */
  queuedAheadMs(): number;
  output(frame: Frame): void;
  fail(stage: string, e: unknown): void;
}

/**
 * user-turn → LLM (the agent runtime: prompt, tools, knowledge) → sentences → TTS at the transport's rate, with
 * each stage's timing written onto the current reply for its trace row.
 */
export function buildReplyPipeline(s: SessionInit, host: ReplyHost): { pipeline: Pipeline; sentences: SentenceStage } {
  const { engines, agent, transport } = s;
  const llm = new LlmStage(s.runtime, {
    history: () => host.history(),
    keep: (turnId, msgs) => host.turn(turnId)?.kept.push(...msgs),
    toolExecuted: (turnId, rec) => host.toolExecuted(turnId, rec),
    firstToken: (turnId, at) => {
      const t = host.turn(turnId);
      if (t && t.firstTokenAt === null) t.firstTokenAt = at;
    },
    textOut: (turnId, chars) => {
      const t = host.turn(turnId);
      if (t) t.llmChars += chars;
    },
    usage: (_id, u) => host.llmTokens(u.inputTokens + u.outputTokens),
    now: () => host.now(),
  });
  const sentences = new SentenceStage();
  const tts = new TtsStage(
    engines.tts,
    {
      voiceId: agent.voice_id,
      speed: agent.style_profile?.speed ?? 1,
      pitch: agent.style_profile?.pitch ?? 1,
      model: agent.tts_model,
      language: agent.language,
      apiKey: engines.ttsKey?.key,
    },
    transport.outRate,
    {
      synthStarted: (turnId, _i, at) => {
        const t = host.turn(turnId);
        if (t && t.synthStartAt === null) t.synthStartAt = at;
      },
      firstAudio: (turnId, _i, at) => {
        const t = host.turn(turnId);
        if (t && t.firstAudioAt === null) t.firstAudioAt = at;
      },
      failed: (turnId, msg) => {
        const t = host.turn(turnId);
        if (t) t.error ??= msg;
        s.log.warn({ sessionId: s.sessionId, stage: msg.split(':')[0] }, 'turn stage failed');
      },
      now: () => host.now(),
      queuedAheadMs: () => host.queuedAheadMs(),
      // The first message is the same words on every call: its audio is cached (per developer) and reused.
      fixedPhraseScope: (turnId) => (host.turn(turnId)?.userText === '' ? s.developerId : null),
    },
  );
  const pipeline = new Pipeline(
    [llm, sentences, tts],
    (f) => host.output(f),
    (stage, e) => host.fail(stage, e),
  );
  return { pipeline, sentences };
}
