import type { z } from 'zod';
import type { TURN_DETECTORS } from '../../../../shared/contracts/turn-seams.ts';
import { EvidenceTurnDetector } from './evidence-turn-detector.ts';
import { entityShape } from './entity-shape.ts';
import type { TurnDetectorContext } from './turn-detector.ts';

/** The silence that ends the turn while an entity is being read (a pause between groups is up to ~1.5 s). */
export const ENTITY_HOLD_MS = 1800;
/** The silence that ends the turn after a hesitation ("um", "let me see"): the caller is looking something up. */
export const HESITATION_HOLD_MS = 2500;

/**
 * `entity-hold` (issue 31): the platform's turn detector, plus holds while the caller reads something out. While the
 * words end in a phone, card or order number, an e-mail address, a spelled name or a date that is not complete yet
 * (entity-shape.ts), the turn ends only after `holdMs` of silence, so the pauses between groups do not end it; after
 * a hesitation, after `hesitationMs`. Once the entity reads complete (ten digits of a phone number, "dot com", the
 * letters of the name said before them, a month and its day), a final ends the turn after the short window
 * (`completeMs`): the reply comes as fast as after any finished sentence. Otherwise the windows are `default`'s.
 */
export class EntityHoldTurnDetector extends EvidenceTurnDetector {
  override readonly name = 'entity-hold';
  private readonly holdMs: number;
  private readonly hesitationMs: number;

  constructor(ctx: TurnDetectorContext, opts: z.infer<(typeof TURN_DETECTORS)['entity-hold']>) {
    super(ctx);
    this.holdMs = opts.holdMs ?? ENTITY_HOLD_MS;
    this.hesitationMs = opts.hesitationMs ?? HESITATION_HOLD_MS;
  }

  override endpointWindowMs(heard: { text: string; final: boolean }, lastSpeechMs: number, quiet: boolean): number {
    const base = super.endpointWindowMs(heard, lastSpeechMs, quiet);
    if (!this.policy.adaptive) return base;
    const shape = entityShape(heard.text);
    if (shape.state === 'reading') return Math.max(base, this.holdMs);
    if (shape.state === 'hesitating') return Math.max(base, this.hesitationMs);
    if (shape.state === 'complete') return heard.final ? this.policy.completeMs : Math.min(base, this.policy.fixedMs);
    return base;
  }

  override prepareVerdict(text: string, lastSpeechMs: number): 'prepare' | 'unprepare' | 'wait' {
    const state = entityShape(text).state;
    if (state === 'reading' || state === 'hesitating') return 'unprepare';
    return super.prepareVerdict(text, lastSpeechMs);
  }
}
