import type { EndpointingPolicy } from './endpointing.ts';

/**
 * The turn-detector seam (issue 30): decides when the caller's turn ends, from the VAD's speech and silence, the
 * STT's words and the caller's audio. The VAD measures the silence; this decides how much of it ends the turn (the
 * endpointing window, decided again as each transcript comes) and, with preemptive replies on, when the caller
 * counts as quiet enough to prepare a reply. The turn stage feeds it and acts on its answers. Implementations are
 * chosen per agent by name (`turnTaking.detector`, turn-detector-registry.ts).
 *
 * Not to be confused with pipeline/input/turn-detector.ts, the VAD's speech/silence state machine that measures the
 * silence this decides about.
 */
export interface TurnDetector {
  readonly name: string;
  /** Caller audio (s16le at the line's rate), as it arrives. */
  onAudio(pcm: Buffer): void;
  /** A new utterance begins: nothing of it is transcribed yet. */
  onUtteranceStart(): void;
  /** An interim transcript whose last word ends at `endMs` (audio ms; undefined when the STT does not time words). */
  onPartial(endMs: number | undefined): void;
  /** A final transcript whose words end at `endMs`, arriving when `audioNowMs` of audio had been received. */
  onFinal(endMs: number, audioNowMs: number): void;
  /**
   * The silence (ms after the caller's last speech at `lastSpeechMs`) that ends the turn, for what was heard so far.
   * `quiet`: the caller is silent now (the end of the speech can be read).
   */
  endpointWindowMs(heard: { text: string; final: boolean }, lastSpeechMs: number, quiet: boolean): number;
  /**
   * The audio time at which the window just decided should be decided again, with the caller still quiet (the STT
   * will have caught up with the speech by then), or null: the turn stage asks again once the audio reaches it.
   */
  recheckAtMs(lastSpeechMs: number): number | null;
  /**
   * The STT has had the caller's audio up to `lastSpeechMs` for as long as it takes to send words for it (a streaming
   * STT): speech there that no words came for is not words on their way. False when that cannot be known.
   */
  heardPast(lastSpeechMs: number): boolean;
  /** Preemptive replies: the silence after which the caller counts as quiet, after saying `text`. */
  prepareAfterMs(text: string): number;
  /**
   * Preemptive replies, the caller quiet after `text`: prepare a reply to it, drop one prepared (it reads
   * unfinished), or wait (the words do not reach the end of the speech at `lastSpeechMs` yet).
   */
  prepareVerdict(text: string, lastSpeechMs: number): 'prepare' | 'unprepare' | 'wait';
}

/** What every turn detector is built from. */
export interface TurnDetectorContext {
  /** The agent's endpointing windows over the platform's defaults (endpointing.ts). */
  policy: EndpointingPolicy;
  /** The caller audio's sample rate. */
  inRate: number;
  /** The STT streams timed, punctuated interims and finals (rather than transcribing each utterance at its end). */
  streaming: boolean;
}
