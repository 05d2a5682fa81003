import type { Meter } from '../../platform/metering/types.ts';
import type { Infra } from '../../platform/infra.ts';

/** The credit meter of this process (reserve → commit/refund). */
export function meterOf(infra: Infra): Meter {
  return infra.meter;
}
