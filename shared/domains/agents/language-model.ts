import type { LanguageModelFiles } from '../../engines/stt/lm/language-models.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import type { Infra } from '../../platform/infra.ts';
import { collectionText } from '../rag/collections.ts';
import { getAgent, type AgentRow } from './db.ts';

/** What an agent's language model is built from; a tool's or variable's name is said with spaces ("book_table"). */
export type AgentWords = Pick<
  AgentRow,
  'id' | 'system_prompt' | 'first_message' | 'tools' | 'variables' | 'collection_id' | 'goodbye_message' | 'description'
>;

const spoken = (name: string) => name.replace(/[_.-]+/g, ' ');

/** The agent's own words, then its collection's text, capped (SPEECH_LM_MAX_CHARS). */
export async function agentLanguageText(infra: Infra, agent: AgentWords): Promise<string> {
  const lm = infra.engines.languageModels;
  const parts = [
    agent.system_prompt,
    agent.first_message,
    agent.description,
    agent.goodbye_message ?? '',
    ...agent.tools.map((t) => `${spoken(t.name)}. ${t.description}`),
    ...Object.keys(agent.variables ?? {}).map(spoken),
  ];
  const own = lm.sourceText(parts);
  const rest = infra.config.SPEECH_LM_MAX_CHARS - own.length;
  const collection = agent.collection_id && rest > 0 ? await collectionText(infra.db, agent.collection_id, rest) : '';
  return lm.sourceText([own, collection]);
}

const labelOf = (agent: Pick<AgentRow, 'id'>) => `biased to agent ${agent.id}`;

/**
 * The agent's language model for a call or a test, when it is built; otherwise null, and a build starts in the
 * background (the call goes on with the general model: a build takes seconds, a caller does not wait for it).
 */
export async function agentLanguageModel(
  infra: Infra,
  agent: AgentWords,
  log?: Logger,
): Promise<LanguageModelFiles | null> {
  const lm = infra.engines.languageModels;
  const text = await agentLanguageText(infra, agent);
  const hit = await lm.cached(text, labelOf(agent));
  if (hit) return hit;
  if (infra.config.SPEECH_LM_AUTO_BUILD) warm(infra, text, agent, log);
  return null;
}

/** The agent's language model, built now if needed (an agent test waits for it: its transcripts should be a call's). */
export async function agentLanguageModelNow(
  infra: Infra,
  agent: AgentWords,
  signal?: AbortSignal,
): Promise<LanguageModelFiles> {
  return infra.engines.languageModels.get(await agentLanguageText(infra, agent), labelOf(agent), signal);
}

/** Starts the agent's build off the request path (after a save): errors are logged, never thrown. */
export function warmAgentLanguageModel(infra: Infra, agent: AgentWords, log?: Logger): void {
  if (!infra.config.SPEECH_LM_AUTO_BUILD) return;
  agentLanguageText(infra, agent).then(
    (text) => warm(infra, text, agent, log),
    (e: Error) => log?.warn({ err: e.message, agentId: agent.id }, 'agent language model: reading its text failed'),
  );
}

function warm(infra: Infra, text: string, agent: AgentWords, log?: Logger): void {
  infra.engines.languageModels
    .get(text, labelOf(agent))
    .catch((e: Error) => log?.warn({ err: e.message, agentId: agent.id }, 'agent language model build failed'));
}

/**
 * After an agent is saved: builds its new model in the background when its calls can use the local STT (direct
 * calls on the default engine, or phone calls when the platform's phone STT is the local one).
 */
export function warmAgentLanguageModelById(infra: Infra, developerId: string, agentId: string, log?: Logger): void {
  if (!infra.config.SPEECH_LM_AUTO_BUILD) return;
  getAgent(infra.db, developerId, agentId).then(
    (agent) => {
      const stt = agent?.metadata?.sttProvider;
      const local = !stt || stt === 'default' || infra.config.REALTIME_PHONE_STT_PROVIDER === 'default';
      if (agent && local) warmAgentLanguageModel(infra, agent, log);
    },
    (e: Error) => log?.warn({ err: e.message, agentId }, 'agent language model: reading the agent failed'),
  );
}
