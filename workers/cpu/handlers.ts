import type { JobsOnPool } from '../../shared/kernel/queue/catalog.ts';
import type { HandlerMap } from '../../shared/kernel/queue/worker-runner.ts';
import type { StartPrivatePlatform } from '../../shared/domains/agent-tests/execute.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { agentTestsCpuHandlers } from './handlers/agent-tests.ts';
import { billingCpuHandlers } from './handlers/billing.ts';
import { callReplayCpuHandlers } from './handlers/call-replay.ts';
import { campaignsCpuHandlers } from './handlers/campaigns.ts';
import { realtimeCpuHandlers } from './handlers/realtime.ts';
import { speechCpuHandlers } from './handlers/speech.ts';
import { videoCpuHandlers } from './handlers/video.ts';
import { webhooksCpuHandlers } from './handlers/webhooks.ts';

/** Every CPU job needs a handler here; the type makes a missing one a compile error. */
export function cpuHandlers(infra: Infra, privatePlatform?: StartPrivatePlatform): HandlerMap<JobsOnPool<'cpu'>> {
  return {
    ...speechCpuHandlers(infra),
    ...videoCpuHandlers(infra),
    ...realtimeCpuHandlers(infra),
    ...billingCpuHandlers(infra),
    ...webhooksCpuHandlers(infra),
    ...campaignsCpuHandlers(infra),
    ...agentTestsCpuHandlers(infra, privatePlatform),
    ...callReplayCpuHandlers(infra, privatePlatform),
  };
}
