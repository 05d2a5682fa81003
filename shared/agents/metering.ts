import type { Meter } from '../billing/types.ts';
import type { Infra } from '../runtime/infra.ts';

/** The credit meter, once the credits area has attached it to Infra (null before: nothing is metered). */
export function meterOf(infra: Infra): Meter | null {
  return (infra as Infra & { meter?: Meter }).meter ?? null;
}
