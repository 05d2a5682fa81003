import { completeness, STALE_MS } from './endpointing.ts';
import { TurnEvidenceTracker } from './turn-evidence.ts';
import type { TurnDetector, TurnDetectorContext } from './turn-detector.ts';

/**
 * Silence after which the caller counts as quiet and a reply is prepared: two Silero frames, so that the gap
 * between two words (and the VAD's own flicker) does not start one.
 */
export const PREPARE_AFTER_MS = 60;
/**
 * After an utterance that reads as finished (final punctuation, a question), one Silero frame of silence is enough:
 * the reply is prepared ~30 ms sooner, and a caller who goes on drops it (rare after a closed sentence).
 */
export const PREPARE_AFTER_COMPLETE_MS = 30;

/**
 * The platform's turn detector (`default`): windows set by the words (a closing mark → completeMs, an unfinished
 * ending → incompleteMs), the STT's lag against the audio and the prosody of the end of the speech, scaled by the
 * agent's eagerness (endpointing.ts `decideWindow`, turn-evidence.ts).
 */
export class EvidenceTurnDetector implements TurnDetector {
  readonly name: string = 'default';
  private readonly evidence: TurnEvidenceTracker;

  constructor(private readonly ctx: TurnDetectorContext) {
    this.evidence = new TurnEvidenceTracker(ctx.inRate, ctx.streaming);
  }

  onAudio(pcm: Buffer): void {
    this.evidence.onAudio(pcm);
  }

  onUtteranceStart(): void {
    this.evidence.reset();
  }

  onPartial(endMs: number | undefined): void {
    this.evidence.onPartial(endMs);
  }

  onFinal(endMs: number, audioNowMs: number): void {
    this.evidence.onFinal(endMs, audioNowMs);
  }

  endpointWindowMs(heard: { text: string; final: boolean }, lastSpeechMs: number, quiet: boolean): number {
    return this.evidence.decide(this.ctx.policy, heard, lastSpeechMs, quiet).windowMs;
  }

  recheckAtMs(lastSpeechMs: number): number | null {
    return this.evidence.recheckAtMs(lastSpeechMs);
  }

  heardPast(lastSpeechMs: number): boolean {
    return this.evidence.heardPast(lastSpeechMs);
  }

  /** The agent's endpointing windows (for detectors built on this one). */
  protected get policy(): TurnDetectorContext['policy'] {
    return this.ctx.policy;
  }

  prepareAfterMs(text: string): number {
    return completeness(text) === 'complete' ? PREPARE_AFTER_COMPLETE_MS : PREPARE_AFTER_MS;
  }

  prepareVerdict(text: string, lastSpeechMs: number): 'prepare' | 'unprepare' | 'wait' {
    // Words that do not reach the end of the speech yet would prepare a reply to half a sentence: wait for them.
    if (this.evidence.uncoveredMs(lastSpeechMs) > STALE_MS) return 'wait';
    return text && completeness(text) !== 'incomplete' ? 'prepare' : 'unprepare';
  }
}
