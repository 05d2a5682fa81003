import {
  dialCampaignCall,
  dispatchCampaign,
  hangUpCampaignCall,
} from '../../../shared/domains/campaigns/dispatcher.ts';
import { settleCampaignCall } from '../../../shared/domains/campaigns/settle.ts';
import type { JobsOn } from '../../../shared/kernel/queue/catalog.ts';
import type { campaignsJobs } from '../../../shared/kernel/queue/jobs/campaigns.ts';
import type { HandlerMap } from '../../../shared/kernel/queue/worker-runner.ts';
import type { Infra } from '../../../shared/platform/infra.ts';

type Names = Extract<keyof typeof campaignsJobs, JobsOn<'cpu'>>;

/** CPU handlers of outbound campaigns: dispatcher, dialler, hang-up, settlement. */
export function campaignsCpuHandlers(infra: Infra): HandlerMap<Names> {
  return {
    'campaign.dispatch': async (p, ctx) => {
      await dispatchCampaign(infra, p.campaignId, ctx.log);
    },
    'campaign.dial': (p, ctx) => dialCampaignCall(infra, p.callId, ctx.signal, ctx.log),
    'campaign.hangup': (p, ctx) => hangUpCampaignCall(infra, p.callId, ctx.signal, ctx.log),
    'campaign.settle': (p, ctx) => settleCampaignCall(infra, p.callId, ctx),
  };
}
