import type { ContextVars } from '../../shared/domains/agents/prompt.ts';
import { callVariables } from '../../shared/domains/campaigns/store.ts';
import { ID_PREFIX } from '../../shared/kernel/ids.ts';
import type { Infra } from '../../shared/platform/infra.ts';

/** The recipient's variables when the session's task is a campaign attempt (`cac_…`); null for other calls. */
export async function campaignCallContext(infra: Infra, taskId: string): Promise<ContextVars | null> {
  if (!taskId.startsWith(`${ID_PREFIX.campaignCall}_`)) return null;
  return (await callVariables(infra.db, taskId)) as ContextVars | null;
}
