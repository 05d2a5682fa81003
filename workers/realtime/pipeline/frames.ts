/**
 * Typed frames that move through the realtime pipeline (Pipecat-style). Data frames queue in order; system frames
 * (interruption, end) overtake them and make every stage drop the data work it has queued or in flight.
 * Audio inside the pipeline is always mono PCM s16le; codecs (μ-law, base64) stay at the transport edge.
 */
export type DataFrame =
  /** Caller audio, PCM at `sampleRate`, `atMs` = stream time of its first sample. */
  | { kind: 'audio-in'; pcm: Buffer; sampleRate: number; atMs: number }
  /** The VAD saw speech begin / end (end = after the endpointing silence). */
  | { kind: 'speech-start'; atMs: number }
  | { kind: 'speech-end'; atMs: number; lastSpeechMs: number }
  /** The caller went quiet (a short silence, before the endpoint): a reply may be prepared, not yet spoken. */
  | { kind: 'speech-pause'; atMs: number; lastSpeechMs: number }
  /** The caller spoke again after a pause, within the same utterance (the endpoint had not passed). */
  | { kind: 'speech-resume'; atMs: number }
  | { kind: 'transcript'; text: string; final: boolean; atMs: number }
  /** A complete user turn for the agent: the text and when the caller's last speech sample was. */
  | { kind: 'user-turn'; text: string; lastSpeechMs: number; sttMs: number; turnId: string }
  | { kind: 'dtmf'; digit: string; atMs: number }
  /** Streaming assistant text (delta) of a turn. */
  | { kind: 'llm-text'; turnId: string; text: string }
  | { kind: 'llm-done'; turnId: string; llmMs: number; error?: string }
  /** One sentence ready for speech. */
  | { kind: 'sentence'; turnId: string; index: number; text: string; last: boolean }
  /** Synthesized speech of one sentence (PCM at `sampleRate`); `last` closes the sentence. */
  | {
      kind: 'tts-audio';
      turnId: string;
      sentence: number;
      text: string;
      pcm: Buffer;
      sampleRate: number;
      last: boolean;
      /** Served from the fixed-phrase cache: nothing was synthesized (or billed) for it. */
      cached?: boolean;
    }
  | { kind: 'turn-done'; turnId: string };

export type SystemFrame =
  /** The caller barged in: flush playback and cancel in-flight LLM/TTS work. */
  { kind: 'interrupt'; atMs: number; reason: string } | { kind: 'end'; reason: string };

export type Frame = DataFrame | SystemFrame;

export const SYSTEM_KINDS: ReadonlySet<Frame['kind']> = new Set(['interrupt', 'end']);

export function isSystemFrame(f: Frame): f is SystemFrame {
  return SYSTEM_KINDS.has(f.kind);
}
