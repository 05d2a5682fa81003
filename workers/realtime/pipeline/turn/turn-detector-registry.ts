import type { TurnDetectorChoice, TURN_DETECTORS } from '../../../../shared/contracts/turn-seams.ts';
import { fromRegistry, type SeamRegistry } from '../seam-registry.ts';
import { EntityHoldTurnDetector } from './entity-hold-turn-detector.ts';
import { EvidenceTurnDetector } from './evidence-turn-detector.ts';
import type { TurnDetector, TurnDetectorContext } from './turn-detector.ts';

/** Every turn detector an agent may name (`turnTaking.detector.name`), one line each. */
export const TURN_DETECTOR_REGISTRY: SeamRegistry<typeof TURN_DETECTORS, TurnDetectorContext, TurnDetector> = {
  default: (ctx) => new EvidenceTurnDetector(ctx),
  'entity-hold': (ctx, opts) => new EntityHoldTurnDetector(ctx, opts),
};

/** The agent's turn detector (`default` when it names none). */
export function turnDetector(ctx: TurnDetectorContext, choice: TurnDetectorChoice = { name: 'default' }): TurnDetector {
  return fromRegistry(TURN_DETECTOR_REGISTRY, ctx, choice);
}
