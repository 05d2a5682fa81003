import type { INTERRUPTION_DETECTORS } from '../../../../shared/kernel/contracts/turn-seams.ts';
import { isBackchannel } from '../words.ts';
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
 * ("yeah", "mm-hm", "I see": turn-detector.ts) interrupts; a final transcript that is not a backchannel interrupts
 * however short; speech past `forceMs` interrupts before its words are in, unless they are a backchannel.
 */
export class WordsInterruptionDetector implements InterruptionDetector {
  readonly name = 'default';
  private readonly phases: Record<AgentPhase, PhaseThresholds>;

  constructor(ctx: InterruptionContext, opts: z.infer<(typeof INTERRUPTION_DETECTORS)['default']>) {
    this.phases = phaseThresholds(ctx, opts);
  }

  decide(s: SpeechOverAgent): InterruptionVerdict {
    if (s.final) return !s.text ? 'pending' : isBackchannel(s.text) ? 'backchannel' : 'speech';
    const { minMs, forceMs } = this.phases[s.phase];
    // Asked on every VAD frame of speech over the agent: the words are read only once a threshold is passed.
    if (s.speechMs < Math.min(minMs, forceMs)) return 'pending';
    const backchannel = s.text !== '' && isBackchannel(s.text);
    if (s.speechMs >= minMs && s.text && !backchannel) return 'speech';
    if (s.speechMs >= forceMs && !backchannel) return 'long_speech';
    return backchannel ? 'backchannel' : 'pending';
  }
}
