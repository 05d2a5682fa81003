import type { LlmProviderInfo } from '../../contracts/agents.ts';
import { LLM_PROVIDER_LABELS, LLM_PROVIDERS } from '../../contracts/providers.ts';
import type { DEFAULT_LLM_MODELS } from '../../engines/llm/registry.ts';
import type { Infra } from '../../platform/infra.ts';

/**
 * The LLM provider an agent gets when it names none: the first vendor with a platform key, or the developer's
 * stored key, in the contract's order (openai, anthropic, groq); with no LLM configured at all, the local reply
 * engine, so a fresh machine has a working agent instead of one that fails on its first turn.
 */
export async function defaultLlmProvider(infra: Infra, developerId: string): Promise<keyof typeof DEFAULT_LLM_MODELS> {
  for (const vendor of ['openai', 'anthropic', 'groq'] as const) {
    if (infra.config.vendors.platformKeys[vendor]) return vendor;
    if (await infra.storedKeys.get(developerId, vendor)) return vendor;
  }
  return 'local';
}

/** Each LLM provider with its label and where this developer's key for it would come from (no header counted). */
export async function llmProviderInfo(infra: Infra, developerId: string): Promise<LlmProviderInfo[]> {
  const fallback = await defaultLlmProvider(infra, developerId);
  const engines = infra.engines.llm;
  return Promise.all(
    LLM_PROVIDERS.map(async (id) => {
      const engine = engines.get(id);
      const key = !engine.capabilities.requiresKey
        ? ('not-needed' as const)
        : infra.config.vendors.platformKeys[id]
          ? ('platform' as const)
          : (await infra.storedKeys.get(developerId, id))
            ? ('stored' as const)
            : ('none' as const);
      return {
        id,
        label: LLM_PROVIDER_LABELS[id],
        languageModel: id !== 'local',
        defaultModel: engine.defaultModel,
        key,
        usable: key !== 'none',
        isDefault: id === fallback,
      };
    }),
  );
}
