import type { INTERRUPTION_DETECTORS } from '../../../../shared/contracts/turn-seams.ts';
import { isListening } from '../words.ts';
import {
  phaseThresholds,
  type AgentPhase,
  type InterruptionContext,
  type InterruptionDetector,
  type InterruptionVerdict,
  type PhaseThresholds,
  type SpeechOverAgent,
} from './interruption.ts';
import type { z } from 'zod';

/**
 * The platform's barge-in rule (`default`): speech that lasts `minMs` and whose words are not a backchannel
 * ("yeah", "mm-hm", "I see", "okay okay", any spelling of a hum) or a hum heard as a short non-word ("op")
 * interrupts (words.ts `isListening`); `minMs` is counted from the sound's onset (`soundMs`), not the VAD's, which
 * lags a soft "w…ait" by up to a quarter second: the words are what guard it, and they are in by then. A final
 * transcript that is neither interrupts however short; speech past `forceMs` (of the VAD's speech) interrupts
 * before its words are in (`long_speech`), unless they are a backchannel. With
 * `resumeFalseStarts` a `long_speech` stop is tentative (turn-stage.ts): the agent stops at once, and resumes where
 * it stopped if no words come. It is opt-in: at 300 calls on 2 cores, where words come late, held and resumed
 * replies failed 28–37 calls against 13 without (benchmarks/voice-latency/README.md).
 */
export class WordsInterruptionDetector implements InterruptionDetector {
  readonly name = 'default';
  private readonly phases: Record<AgentPhase, PhaseThresholds>;
  readonly resumesFalseStarts: boolean;

  constructor(ctx: InterruptionContext, opts: z.infer<(typeof INTERRUPTION_DETECTORS)['default']>) {
    this.phases = phaseThresholds(ctx, opts);
    this.resumesFalseStarts = opts.resumeFalseStarts ?? false;
  }

  decide(s: SpeechOverAgent): InterruptionVerdict {
    if (s.final) return !s.text ? 'pending' : isListening(s.text) ? 'backchannel' : 'speech';
    const { minMs, forceMs } = this.phases[s.phase];
    // Words need the sound to have lasted minMs; speech without words needs the VAD's own forceMs.
    const soundMs = Math.max(s.speechMs, s.soundMs ?? 0);
    // Asked on every VAD frame of speech over the agent: the words are read only once a threshold is passed.
    if (soundMs < minMs && s.speechMs < forceMs) return 'pending';
    const backchannel = s.text !== '' && isListening(s.text);
    if (soundMs >= minMs && s.text && !backchannel) return 'speech';
    if (s.speechMs >= forceMs && !backchannel) return 'long_speech';
    return backchannel ? 'backchannel' : 'pending';
  }
}
