import type { InterruptionChoice, INTERRUPTION_DETECTORS } from '../../../../shared/contracts/turn-seams.ts';
import { fromRegistry, type SeamRegistry } from '../seam-registry.ts';
import { ContrastInterruptionDetector } from './contrast-interruption.ts';
import type { InterruptionContext, InterruptionDetector } from './interruption.ts';
import { VadOnlyInterruptionDetector } from './vad-only-interruption.ts';
import { WordsInterruptionDetector } from './words-interruption.ts';

/** Every interruption detector an agent may name (`turnTaking.interruption.name`), one line each. */
export const INTERRUPTION_REGISTRY: SeamRegistry<
  typeof INTERRUPTION_DETECTORS,
  InterruptionContext,
  InterruptionDetector
> = {
  default: (ctx, opts) => new WordsInterruptionDetector(ctx, opts),
  'vad-only': (ctx, opts) => new VadOnlyInterruptionDetector(ctx, opts),
  'line-contrast': (ctx, opts) => new ContrastInterruptionDetector(ctx, opts),
};

/** The agent's interruption detector (`default` when it names none). */
export function interruptionDetector(
  ctx: InterruptionContext,
  choice: InterruptionChoice = { name: 'default' },
): InterruptionDetector {
  return fromRegistry(INTERRUPTION_REGISTRY, ctx, choice);
}
