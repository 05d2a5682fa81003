import type { Config } from '../../kernel/config/index.ts';
import type { Voicemail } from '../../contracts/agents.ts';
import type { Infra } from '../../platform/infra.ts';
import { creditWeights } from '../../platform/metering/weights.ts';
import { getAgent } from '../agents/db.ts';
import { fundableCalls, fundingBlock, readFunding, type FundingBlock } from '../billing/funding.ts';
import { minimumCallCredits } from '../billing/session-hold.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import { attemptsAwaitingHold } from './store.ts';

/**
 * The least one campaign call can cost: its first connected minute, plus the voicemail message when the agent
 * leaves one (its characters at the TTS weight, priced as billable: the check errs on the side of the cap). A call
 * dialled with less than this could be cut before its first sentence or in the middle of its message.
 */
export function campaignCallCredits(config: Config, voicemail: Voicemail | null): number {
  const message = voicemail?.action === 'leave_message' ? (voicemail.message ?? '') : '';
  const tts = message ? creditWeights(config).credits('tts', 'session.tts', message.length) : 0;
  return minimumCallCredits(config) + tts;
}

/**
 * What money allows a campaign now: how many calls it funds, how many of them are placed already (attempts whose
 * session holds no first minute yet), or why none can be placed (`waiting`).
 */
export interface CampaignFunding {
  calls: number;
  placed: number;
  waiting: FundingBlock | null;
  perCall: number;
}

/**
 * The money check before dialling (issue #33): the balance and the daily caps (the developer's and the key that
 * created the campaign) must fund the first minute (plus the voicemail message) of every call placed and not yet
 * holding its minute and of each new one. Nothing funded and nothing in flight: the campaign waits, with the reason.
 * Calls in flight that use the money up: no new call, and no wait yet (their end re-checks). `q` reads the attempts
 * (the claim's transaction, under its lock).
 */
export async function campaignFunding(
  infra: Infra,
  c: { developer_id: string; agent_id: string; api_key_id: string | null },
  now = new Date(),
  q: Queryable = infra.db,
): Promise<CampaignFunding> {
  const agent = await getAgent(q, c.developer_id, c.agent_id);
  const perCall = campaignCallCredits(infra.config, agent?.voicemail ?? null);
  // The attempts first, then the money: a hold that commits between the two reads is counted twice (on the side of
  // the cap), never missed.
  const placed = await attemptsAwaitingHold(q, c.developer_id);
  const f = await readFunding(infra.db, infra.config, c.developer_id, c.api_key_id, now, q);
  const calls = fundableCalls(f, perCall);
  if (calls > placed) return { calls, placed, waiting: null, perCall };
  return { calls, placed, waiting: placed > 0 ? null : (fundingBlock(f, perCall) ?? 'balance'), perCall };
}

/** New calls the money funds now, beside the attempts placed (read under the claim's lock, on its transaction). */
export async function fundableNewCalls(
  infra: Infra,
  c: { developer_id: string; agent_id: string; api_key_id: string | null },
  tx: Queryable,
): Promise<number> {
  const f = await campaignFunding(infra, c, new Date(), tx);
  return Math.max(0, f.calls - f.placed);
}
