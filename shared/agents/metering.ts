import type { Meter } from '../billing/types.ts';
import type { Infra } from '../runtime/infra.ts';

/** The credit meter of this process (reserve → commit/refund). */
export function meterOf(infra: Infra): Meter {
  return infra.meter;
}
