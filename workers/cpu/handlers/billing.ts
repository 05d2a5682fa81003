import { reportOverage } from '../../../shared/domains/billing/overage.ts';
import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import type { billingJobs } from '../../../shared/kernel/queue/jobs/billing.ts';

type Names = Extract<keyof typeof billingJobs, JobsOn<'cpu'>>;

/** CPU handlers of the billing area. */
export function billingCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'billing.report-overage': async (_payload, ctx) => reportOverage(infra, ctx.signal),
  };
}
