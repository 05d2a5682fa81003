import type { z } from 'zod';
import type { INTERRUPTION_DETECTORS } from '../../../../shared/contracts/turn-seams.ts';
import { isListening } from '../words.ts';
import type {
  InterruptionContext,
  InterruptionDetector,
  InterruptionVerdict,
  SpeechOverAgent,
} from './interruption.ts';
import { WordsInterruptionDetector } from './words-interruption.ts';

/** How far over the line's background caller speech must stand (dB) when an agent sets no `marginDb`. */
export const CONTRAST_MARGIN_DB = 5;
/**
 * Speech this far (dB) or more under the caller's own speech level that does not stand `marginDb` over the line is
 * not the caller, whatever its words: a crowd behind them, heard by the STT.
 */
export const UNDER_CALLER_DB = 10;

/**
 * `line-contrast`: `default`'s rule, for speech that stands out from the line. Background voices — a crowd, a
 * television, a call centre — are speech to the VAD at every level, and a streaming STT may even transcribe them;
 * what tells them from the caller is that they are the line's background: their level is the level the line
 * carried before them. When the line carries voices (a quarter of its last 2.5 s was speech to the VAD), speech
 * over the agent is a barge-in only when it has stood `marginDb` over them — the median level of 320 ms of it over
 * the 90th percentile of the 2.5 s before, at its highest since it began (line-levels.ts) — and then by `default`'s
 * rule (words that are not a backchannel after `minMs`, or `forceMs` of speech). Under the margin it never
 * interrupts, whatever its words or length. A caller speaking over a crowd stands out by the call's SNR; one as
 * quiet as the crowd does not interrupt until they speak up. On a line without voices, in the call's first 0.6 s
 * and without levels (a VAD that reports none) it is `default`.
 */
export class ContrastInterruptionDetector implements InterruptionDetector {
  readonly name = 'line-contrast';
  private readonly words: WordsInterruptionDetector;
  private readonly marginDb: number;
  readonly resumesFalseStarts: boolean;

  constructor(ctx: InterruptionContext, opts: z.infer<(typeof INTERRUPTION_DETECTORS)['line-contrast']>) {
    this.words = new WordsInterruptionDetector(ctx, { ...opts, name: 'default' });
    this.resumesFalseStarts = this.words.resumesFalseStarts;
    this.marginDb = opts.marginDb ?? CONTRAST_MARGIN_DB;
  }

  decide(s: SpeechOverAgent): InterruptionVerdict {
    // Background voices the VAD seldom takes for speech (the line does not count as carrying voices) whose words the
    // STT transcribed: well under how the caller speaks, and not standing out from the line.
    const under = s.underCallerDb ?? null;
    const line = s.lineContrastDb ?? null;
    if (under !== null && line !== null && under >= UNDER_CALLER_DB && line < this.marginDb) return this.listening(s);
    // Unknown (no levels, or the call's first 0.6 s): default's rule, never later than without the levels.
    if (s.contrastDb === undefined || s.contrastDb === null) return this.words.decide(s);
    if (s.contrastDb < this.marginDb) return this.listening(s);
    return this.words.decide(s);
  }

  /** Not a barge-in: a backchannel if its words say so, else nothing yet. */
  private listening(s: SpeechOverAgent): InterruptionVerdict {
    return s.text !== '' && isListening(s.text) ? 'backchannel' : 'pending';
  }
}
