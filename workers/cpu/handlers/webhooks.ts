import type { JobsOn } from '../../../shared/queue/catalog.ts';
import type { HandlerMap } from '../../../shared/queue/worker-runner.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';
import type { webhooksJobs } from '../../../shared/queue/jobs/webhooks.ts';
import { deliverWebhook } from '../../../shared/webhooks/delivery.ts';

type Names = Extract<keyof typeof webhooksJobs, JobsOn<'cpu'>>;

/** CPU handlers of the webhooks area: one delivery attempt per job (the next is scheduled by the handler). */
export function webhooksCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'webhook.deliver': (p, ctx) => deliverWebhook(infra, p.messageId, p.attempt, ctx.signal),
  };
}
