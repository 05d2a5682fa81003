import { AnswerStage } from '../pipeline/answer/answer-stage.ts';
import { inputProcessors } from '../pipeline/input/input-registry.ts';
import { InputStage } from '../pipeline/input/input-stage.ts';
import type { Conversation } from '../pipeline/conversation.ts';
import { LimitStage, type ReplyLimits } from '../pipeline/answer/limit-stage.ts';
import { LlmStage } from '../pipeline/answer/llm-stage.ts';
import { PlaybackStage } from '../pipeline/output/playback-stage.ts';
import { ReplyStage } from '../pipeline/answer/reply-stage.ts';
import { SentenceStage } from '../pipeline/output/sentence-stage.ts';
import { Pipeline, type Emit, type Stage } from '../pipeline/stage.ts';
import { SttStage } from '../pipeline/input/stt-stage.ts';
import { TtsStage } from '../pipeline/output/tts-stage.ts';
import { PREPARE_AFTER_MS } from '../pipeline/turn/evidence-turn-detector.ts';
import { TurnStage } from '../pipeline/turn/turn-stage.ts';
import { interruptionDetector } from '../pipeline/turn/interruption-registry.ts';
import { turnDetector } from '../pipeline/turn/turn-detector-registry.ts';
import { VadStage } from '../pipeline/input/vad-stage.ts';
import type { StereoRecorder } from '../pipeline/output/recorder.ts';
import type { SessionInit } from './types.ts';

/** The interruption detector of a phone call whose agent names none (docs/realtime.md, "Turn-taking seams"). */
export const PHONE_INTERRUPTION = { name: 'line-contrast' } as const;

export interface VoicePipeline {
  pipeline: Pipeline;
  /** Read at the end of the call: the caller audio sent to the STT (billed), and the preemptive replies' counts. */
  stt: SttStage;
  reply: ReplyStage;
}

/**
 * The voice loop of one call, the same for every transport: transport in → VAD → STT → turn decision → reply →
 * limits → LLM → sentences → TTS → playback → transport out, and the session's sink after the last stage. A new stage is
 * one file in pipeline/ and one entry in this list (docs/realtime.md, "Adding a stage").
 */
export function buildVoicePipeline(
  s: SessionInit,
  conv: Conversation,
  recorder: StereoRecorder | null,
  limits: ReplyLimits,
  sink: Emit,
  onError: (stage: string, e: unknown) => void,
): VoicePipeline {
  const { engines, agent, transport, settings } = s;
  const log = s.log.child({ sessionId: s.sessionId });
  const stt = new SttStage(engines.stt, {
    inRate: transport.inRate,
    language: agent.language,
    apiKey: engines.sttKey?.key,
    languageModel: engines.sttLanguageModel,
    ...(engines.sttFallback ? { fallback: engines.sttFallback } : {}),
    developerId: s.developerId,
    now: conv.now,
    log,
  });
  const reply = new ReplyStage(conv);
  // Outbound calls with answering-machine detection: who answered decides the greeting (answer-stage.ts).
  const answer =
    s.outbound && settings.amd
      ? new AnswerStage(conv, {
          infra: s.infra,
          sessionId: s.sessionId,
          taskId: s.outbound.taskId,
          inRate: transport.inRate,
          agent,
          variables: s.outbound.variables,
          log,
        })
      : null;
  // The agent's seams (issue 30; docs/realtime.md, "Turn-taking seams"): none named = the platform's defaults.
  const inRate = transport.inRate;
  const streaming = engines.stt.capabilities.streaming;
  const processors = inputProcessors({ inRate }, agent.audio?.inputProcessors);
  const detector = turnDetector({ policy: settings.endpointing, inRate, streaming }, agent.turn_taking?.detector);
  // On phone calls an agent that names no interruption detector gets `line-contrast`: `default`'s rule, except that
  // background voices on the line (a crowd, a television) do not barge in (issue 31, bench:robustness).
  const interruption = interruptionDetector(
    settings,
    agent.turn_taking?.interruption ?? (transport.channel === 'twilio' ? PHONE_INTERRUPTION : undefined),
  );
  const stages: Stage[] = [
    ...(processors.length > 0 ? [new InputStage(processors)] : []),
    ...(answer ? [answer] : []),
    new VadStage(engines.vad, transport.inRate, {
      threshold: settings.vadThreshold,
      startMs: 60,
      endpointMs: settings.endpointing.fixedMs,
      pauseMs: settings.endpointing.preemptive ? PREPARE_AFTER_MS : 0,
    }),
    stt,
    new TurnStage(conv, { settings, inRate, streaming, detector, interruption, sttEngine: () => stt.engineInUse }),
    reply,
    // Each reply reserves what it will use first; a cap or the balance answers it with the goodbye (limit-stage.ts).
    new LimitStage(conv, limits),
    new LlmStage(s.runtime, conv),
    new SentenceStage(),
    new TtsStage(
      engines.tts,
      {
        voiceId: agent.voice_id,
        speed: agent.style_profile?.speed ?? 1,
        pitch: agent.style_profile?.pitch ?? 1,
        model: agent.tts_model,
        language: agent.language,
        apiKey: engines.ttsKey?.key,
        developerId: s.developerId,
      },
      transport.outRate,
      conv,
    ),
    new PlaybackStage(conv, recorder),
  ];
  return { pipeline: new Pipeline(stages, sink, onError), stt, reply };
}
