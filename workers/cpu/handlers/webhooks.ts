import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import type { webhooksJobs } from '../../../shared/kernel/queue/jobs/webhooks.ts';
import { deliverWebhook } from '../../../shared/domains/webhooks/delivery.ts';

type Names = Extract<keyof typeof webhooksJobs, JobsOn<'cpu'>>;

/** CPU handlers of the webhooks area: one delivery attempt per job (the next is scheduled by the handler). */
export function webhooksCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'webhook.deliver': (p, ctx) => deliverWebhook(infra, p.messageId, p.attempt, ctx.signal),
  };
}
