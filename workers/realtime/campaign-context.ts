import type { ContextVars } from '../../shared/domains/agents/prompt.ts';
import { callHangupReason, callVariables } from '../../shared/domains/campaigns/store.ts';
import { SessionEndReason } from '../../shared/kernel/contracts/sessions.ts';
import { ID_PREFIX } from '../../shared/kernel/ids.ts';
import type { Infra } from '../../shared/platform/infra.ts';

/** The recipient's variables when the session's task is a campaign attempt (`cac_…`); null for other calls. */
export async function campaignCallContext(infra: Infra, taskId: string): Promise<ContextVars | null> {
  if (!taskId.startsWith(`${ID_PREFIX.campaignCall}_`)) return null;
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
  if (!taskId?.startsWith(`${ID_PREFIX.campaignCall}_`)) return fallback;
  const hungUp = SessionEndReason.safeParse(await callHangupReason(infra.db, taskId).catch(() => null));
  return hungUp.success ? hungUp.data : fallback;
}
