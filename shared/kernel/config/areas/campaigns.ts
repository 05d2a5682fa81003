import { envInt } from '../env.ts';

/**
 * Outbound campaigns (docs/campaigns.md, "Lost status callbacks"). Merged into EnvSchema. A campaign call holds one
 * of its campaign's concurrency slots until Twilio's final status callback settles it; these bound how long the
 * platform waits for that callback before asking Twilio itself.
 */
export const campaignsEnv = {
  CAMPAIGN_RING_TIMEOUT_SECONDS: envInt(5, 600)
    .default(60)
    .describe("How long a campaign call rings before Twilio gives up (its `Timeout`; Twilio's default is 60)."),
  CAMPAIGN_STATUS_MARGIN_SECONDS: envInt(0, 86_400)
    .default(300)
    .describe(
      'A campaign call not ended after ring timeout + its maximum duration + this margin is looked up at Twilio ' +
        '(GET Calls/{Sid}.json) and settled from the status Twilio gives: its final status callback was lost.',
    ),
  CAMPAIGN_STATUS_GIVE_UP_SECONDS: envInt(0, 7 * 86_400)
    .default(3600)
    .describe(
      'When Twilio cannot be asked about such a call, it is settled as failed (its slot freed) this long after ' +
        'the look-up became due.',
    ),
};
