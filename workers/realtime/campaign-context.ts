import type { ContextVars } from '../../shared/domains/agents/prompt.ts';
import { callHangupReason, callVariables, markRefused } from '../../shared/domains/campaigns/store.ts';
import { refusalTwiml } from '../../shared/domains/realtime/admission.ts';
import { updateLiveCall } from '../../shared/domains/realtime/twilio-calls.ts';
import { SessionEndReason } from '../../shared/contracts/sessions.ts';
import { ID_PREFIX } from '../../shared/kernel/ids.ts';
import type { Logger } from '../../shared/kernel/observability/logger.ts';
import type { Infra } from '../../shared/platform/infra.ts';

const isCampaignCall = (taskId: string | null | undefined): taskId is string =>
  !!taskId?.startsWith(`${ID_PREFIX.campaignCall}_`);

/** The recipient's variables when the session's task is a campaign attempt (`cac_…`); null for other calls. */
export async function campaignCallContext(infra: Infra, taskId: string): Promise<ContextVars | null> {
  if (!isCampaignCall(taskId)) return null;
  return (await callVariables(infra.db, taskId)) as ContextVars | null;
}

/**
 * Why the stream of a campaign attempt is stopping: the attempt's hang-up reason when the platform hung the call up
 * (`campaign-canceled`), else `fallback` (the caller hung up). Never throws: a failed read, or a hang-up reason that
 * is no session end reason, keeps the fallback.
 */
export async function campaignStopReason(
  infra: Infra,
  taskId: string | null,
  fallback: SessionEndReason,
): Promise<SessionEndReason> {
  if (!isCampaignCall(taskId)) return fallback;
  const hungUp = SessionEndReason.safeParse(await callHangupReason(infra.db, taskId).catch(() => null));
  return hungUp.success ? hungUp.data : fallback;
}

/**
 * The stream of an answered campaign attempt was refused (the developer's session cap filled between the dispatch
 * and the answer): the attempt is marked to be re-queued, not failed, and the live call gets the operator's short
 * message and a hang-up through Twilio's REST API instead of silence. False for other calls (nothing done). Never
 * throws: when Twilio cannot be reached the socket still closes and the call ends.
 */
export async function refuseCampaignStream(
  infra: Infra,
  taskId: string | null | undefined,
  callSid: string,
  log: Logger,
  reason = "the developer's session cap was full when the media stream started",
): Promise<boolean> {
  if (!isCampaignCall(taskId)) return false;
  await markRefused(infra.db, taskId, reason).catch((e: Error) =>
    log.warn({ taskId, err: e.message }, 'refused campaign stream: not marked for re-queue'),
  );
  await speakRefusal(infra, callSid, log);
  return true;
}

/**
 * An answered call the platform cannot take (a campaign's refused stream, or a call money cannot fund once its
 * stream starts: issue #33): the operator's message and a hang-up through Twilio's REST API, instead of the
 * silence and dead line of a closed stream. Never throws.
 */
export async function speakRefusal(infra: Infra, callSid: string, log: Logger): Promise<void> {
  try {
    await updateLiveCall(infra, callSid, { twiml: refusalTwiml(infra.config, { answered: true }) });
  } catch (e) {
    log.warn({ callSid, err: (e as Error).message }, 'refused call: message not sent');
  }
}
