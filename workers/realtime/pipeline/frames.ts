import type { ToolCallRecord } from '../../../shared/contracts/agents.ts';
import type { LimitEndReason } from '../../../shared/contracts/end-reasons.ts';
import type { SessionEndReason } from '../../../shared/contracts/sessions.ts';

/** One trace row of a turn (user or assistant), as the stages make it and call/trace-store.ts writes it. */
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
  suspectedCutIn?: boolean;
  /** Caller turns of a call whose STT can fall back: the engine whose final made the turn. */
  sttEngine?: string;
}

/** One barge-in, as the turn stage reports it and call/trace-store.ts writes it. */
export interface InterruptionRecord {
  turnIdx: number;
  atMs: number;
  detectionMs: number;
  stopMs: number;
  bleedWords: number;
  reason: string;
}

/**
 * Typed frames that move through the voice pipeline (Pipecat-style), transport in → VAD → STT → turn decision →
 * reply → LLM → sentences → TTS → playback → the session's sink. Audio inside the pipeline is always mono PCM
 * s16le; codecs (μ-law, base64) stay at the transport edge. Three classes (see `frameClass`):
 * - data frames queue in order at a stage that works asynchronously (LLM, TTS, VAD scoring); an interruption drops
 *   the queued ones;
 * - uninterruptible data frames (`end-call`, `transfer`) queue in order too, but an interruption keeps them: a call
 *   that is ending ends even when the caller talks over the goodbye;
 * - system frames overtake queued data and pass every stage at once. `interrupt` and `end` also cancel: a stage
 *   drops its queue and the AbortSignal of its work in flight fires. The rest are control and notifications
 *   (marks, transcripts, trace rows) that must arrive now and must never be dropped by an interruption.
 */
export type DataFrame =
  /** Caller audio, PCM at `sampleRate`, `atMs` = stream time of its first sample. */
  | { kind: 'audio-in'; pcm: Buffer; sampleRate: number; atMs: number }
  /**
   * The VAD scored one of its frames; `endMs` = stream time of its end (the turn stage's clock for barge-in),
   * `lastSpeechMs` = where the caller's speech ends so far (the turn evidence measures the words against it),
   * `levelDb` = the scored frame's level (dBFS; the interruption detector's line levels, turn/line-levels.ts).
   */
  | { kind: 'vad-frame'; endMs: number; lastSpeechMs: number; levelDb?: number }
  /** The VAD saw speech end (after the endpointing silence). */
  | { kind: 'speech-end'; atMs: number; lastSpeechMs: number }
  /** The caller went quiet (a short silence, before the endpoint): a reply may be prepared, not yet spoken. */
  | { kind: 'speech-pause'; atMs: number; lastSpeechMs: number }
  /** The caller spoke again after a pause, within the same utterance (the endpoint had not passed). */
  | { kind: 'speech-resume'; atMs: number }
  /**
   * The VAD took back the end of an utterance (the turn stage asked with `reopen`: a late final reads unfinished):
   * the utterance goes on, quiet since `lastSpeechMs`, until the new window passes in silence or speech resumes.
   */
  | { kind: 'speech-reopened'; lastSpeechMs: number }
  /** The turn stage's decision: the caller finished an utterance (text may be empty: nothing was understood). */
  | ({ kind: 'utterance' } & SpokenTurn)
  /** A keypad entry ("1234#", or digits then a pause), a user turn of its own. */
  | { kind: 'keypad'; digits: string; atMs: number }
  /** The caller went quiet after saying `text`: prepare the reply to it, unheard until the turn is confirmed. */
  | { kind: 'prepare'; text: string }
  /** The caller went on (or the words stopped reading as finished): drop the prepared reply. */
  | { kind: 'unprepare' }
  /** A user turn for the agent: the LLM answers `text` as reply `turnId`. */
  | { kind: 'user-turn'; text: string; lastSpeechMs: number; sttMs: number; turnId: string }
  /**
   * Speak `text` without the LLM (greeting, goodbye, voicemail message, transfer notice). Pushed without `turnId`
   * at the head; the reply stage gives it one. It takes the floor like a new turn: a reply still playing is cut.
   */
  | {
      kind: 'say';
      text: string;
      purpose: SayPurpose;
      turnId?: string;
      /**
       * Rendered now, heard later: its audio is held at playback until `play-held` (the voicemail message, made
       * while the machine's greeting plays, so that it is ready the moment the greeting ends).
       */
      hold?: boolean;
    }
  /** Play the held `say` (if it is still the current reply): its audio so far at once, the rest as it comes. */
  | { kind: 'play-held' }
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
  /** End the call once the audio queued before this frame has played; `reason` is stored on the session. */
  | { kind: 'end-call'; reason: SessionEndReason }
  /** Hand the call over once the audio queued before this frame has played (the phone transport acts on it). */
  | { kind: 'transfer'; target: string; mode: 'cold' | 'warm'; summary?: string };

export type SayPurpose = 'greeting' | 'goodbye' | 'voicemail' | 'transfer' | (string & {});

/** A finished utterance, on the session clock. */
export interface SpokenTurn {
  text: string;
  onsetAt: number;
  lastSpeechAt: number;
  /** When the final transcript came in (the endpoint, when none did). */
  finalAt: number;
  endpointAt: number;
  /** The designed endpointing silence (audio time). */
  endpointWaitMs: number;
  /** How late the endpoint was decided relative to the audio clock (processing lag). */
  vadLagMs: number;
  /** The STT engine of the utterance's last final, when the call's STT can fall back (absent otherwise). */
  sttEngine?: string;
}

export type SystemFrame =
  /** Opens the pipeline (the STT stream connects). */
  | { kind: 'start' }
  /**
   * Cancels the reply's work in flight (LLM stream, tools, synthesis). `flush` (default true): a barge-in or a
   * superseding turn, so playback is flushed too and the reply is cut to what was heard; false: only the work of a
   * prepared, unheard reply is thrown away. `onsetAt`: when the caller's speech began (session clock).
   */
  | { kind: 'interrupt'; atMs: number; reason: string; onsetAt?: number | null; flush?: boolean }
  /**
   * A tentative stop (caller speech over the agent long enough to stop it, no words yet): the agent's audio stops
   * at once (playback flushed) but its reply goes on being made and is held; `resume-playback` plays what was held
   * from where it stopped (no words came: a noise, a hum), an `interrupt` makes it a barge-in (words came).
   */
  | { kind: 'hold-playback'; atMs: number; onsetAt: number | null }
  | { kind: 'resume-playback'; atMs: number }
  | { kind: 'end'; reason: SessionEndReason }
  /**
   * Playback flushed: the far end drops the agent audio it had queued (Twilio's `clear`) and the recording's agent
   * side is cut there. The playback stage emits it on every barge-in; pushed at the head it flushes what is queued
   * and nothing else (the reply goes on; `interrupt` cuts the reply).
   */
  | { kind: 'clear'; atMs: number }
  /**
   * The VAD saw speech begin at `atMs`. `soundOnsetMs`: where the sound it continues from rose over the line's floor
   * (≤ `atMs`): the VAD's model scores a soft onset ("w…ait") as speech up to a quarter second after the sound began.
   */
  | { kind: 'speech-start'; atMs: number; soundOnsetMs?: number }
  /**
   * What the STT heard. `endMs`: stream time where it ends (a final's end; a partial's last word, when the engine
   * says). Batch transcriptions carry `batchOnsetMs` (the onset of the speech transcribed) and `failed`.
   */
  | {
      kind: 'transcript';
      text: string;
      final: boolean;
      atMs: number;
      endMs?: number;
      batchOnsetMs?: number;
      failed?: boolean;
      /** Finals of a call whose STT can fall back to another engine: the engine that produced it. */
      engine?: string;
    }
  /**
   * How far a recogniser that decodes on this machine (the local one) has got through the caller's audio (VAD
   * clock, ms): `decodedMs` decoded, `settledMs` every final before it sent. Only the turn stage reads it (its wait
   * for a final follows it); it goes no further.
   */
  | { kind: 'stt-progress'; decodedMs: number; settledMs: number }
  /** A keypad key from the transport. */
  | { kind: 'dtmf'; digit: string; atMs: number }
  /** The far end echoed a mark: the audio before it has played. */
  | { kind: 'mark'; name: string }
  /** A prepared reply was confirmed: the frames it held, in order, to play now. */
  | { kind: 'release'; turnId: string; frames: DataFrame[] }
  /** The first audio of a reply went out. */
  | { kind: 'agent-speaking'; turnId: string }
  /** A reply's text is complete (what the model wrote, or the text said). */
  | { kind: 'agent-done'; turnId: string; text: string }
  /** A finished turn's trace row (user or assistant), and a reply's latency split into stages for the debug log. */
  | { kind: 'turn-done'; record: TurnRecord; timing?: Record<string, number | null> | null }
  /** A barge-in, as recorded for the interruption-quality report. */
  | { kind: 'interruption'; record: InterruptionRecord }
  /** A tool the LLM ran during trace turn `turnIdx`. */
  | { kind: 'tool'; turnIdx: number; call: ToolCallRecord; atMs: number }
  /** Usage a vendor will bill: TTS characters synthesized, LLM tokens (input + output) reported. */
  | { kind: 'usage'; category: 'tts' | 'llm'; units: number }
  /** A stage of one reply failed (the turn goes on: a reply without audio, a cut synthesis). */
  | { kind: 'turn-error'; turnId: string; stage: string }
  /**
   * A per-call or daily cap, or the balance, stops the next reply (limit-stage.ts). `answered`: the turn that would
   * have answered says the goodbye and an `end-call` follows it; otherwise the session says it and ends the call.
   */
  | { kind: 'limit-reached'; reason: LimitEndReason; answered: boolean };

export type Frame = DataFrame | SystemFrame;

/** Control sent upstream, toward the transport: the turn stage steers the VAD's endpointing. */
export type UpstreamFrame =
  /** The silence that ends the current utterance, and the one after which a pause is reported (when given). */
  | { kind: 'endpoint-window'; endpointMs: number; pauseMs?: number; reconsider: boolean }
  /** The STT heard speech until `untilMs` (word timings): the silence restarts there. */
  | { kind: 'heard-speech'; untilMs: number }
  /**
   * The STT re-timed words it had already sent (a lagging STT caught up): the speech ended at `atMs`, in a soft
   * tail the VAD scored as silence. No new speech: a reported pause stands.
   */
  | { kind: 'speech-ended-at'; atMs: number }
  /**
   * Take back the endpoint of the utterance begun at `onsetMs` whose speech ended at `lastSpeechMs`: it goes on
   * until `endpointMs` of silence. The VAD answers `speech-reopened` when it could (before this call returns: the
   * upstream path and the VAD's reports are synchronous); nothing when the silence already heard is that long or
   * new speech has begun.
   */
  | { kind: 'reopen'; onsetMs: number; lastSpeechMs: number; endpointMs: number }
  /**
   * The caller's speech ended at `lastSpeechMs`: what the VAD scored as speech since is not theirs (a crowd behind
   * them that the STT found no words in, well under their voice). The VAD ends the utterance there now (`speech-end`,
   * before this call returns); what it hears next is a new run. Nothing when it is not in speech.
   */
  | { kind: 'end-speech'; lastSpeechMs: number };

const SYSTEM: ReadonlySet<Frame['kind']> = new Set<Frame['kind']>([
  'start',
  'interrupt',
  'hold-playback',
  'resume-playback',
  'end',
  'clear',
  'speech-start',
  'transcript',
  'stt-progress',
  'dtmf',
  'mark',
  'release',
  'agent-speaking',
  'agent-done',
  'turn-done',
  'interruption',
  'tool',
  'usage',
  'turn-error',
  'limit-reached',
]);
const UNINTERRUPTIBLE: ReadonlySet<Frame['kind']> = new Set<Frame['kind']>(['end-call', 'transfer']);

export function isSystemFrame(f: Frame): f is SystemFrame {
  return SYSTEM.has(f.kind);
}

/** Kept in a stage's queue when an interruption drops the rest. */
export function isUninterruptible(f: DataFrame): boolean {
  return UNINTERRUPTIBLE.has(f.kind);
}

/** System frames that cancel queued and in-flight data work. */
export function cancels(f: SystemFrame): boolean {
  return f.kind === 'interrupt' || f.kind === 'end';
}
