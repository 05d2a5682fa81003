import type { z } from 'zod';
import type { INTERRUPTION_DETECTORS } from '../../../../shared/contracts/turn-seams.ts';
import {
  phaseThresholds,
  type AgentPhase,
  type InterruptionContext,
  type InterruptionDetector,
  type InterruptionVerdict,
  type PhaseThresholds,
  type SpeechOverAgent,
} from './interruption.ts';

/**
 * `vad-only`: speech the VAD has heard for `minMs` interrupts, whatever its words. No word list: the agent stops at
 * once, before any transcript, and a backchannel ("mm-hm") stops it too. For agents whose callers rarely
 * backchannel, or an STT too slow to wait for.
 */
export class VadOnlyInterruptionDetector implements InterruptionDetector {
  readonly name = 'vad-only';
  private readonly phases: Record<AgentPhase, PhaseThresholds>;

  constructor(ctx: InterruptionContext, opts: z.infer<(typeof INTERRUPTION_DETECTORS)['vad-only']>) {
    this.phases = phaseThresholds(ctx, opts);
  }

  decide(s: SpeechOverAgent): InterruptionVerdict {
    return s.speechMs >= this.phases[s.phase].minMs ? 'speech' : 'pending';
  }
}
