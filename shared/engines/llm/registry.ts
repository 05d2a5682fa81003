import type { Config } from '../../kernel/config/index.ts';
import type { LlmProviderInfo } from '../../kernel/contracts/agents.ts';
import { LLM_PROVIDER_LABELS, LLM_PROVIDERS } from '../../kernel/contracts/providers.ts';
import type { Infra } from '../../platform/infra.ts';
import { EngineRegistry } from '../core/registry.ts';
import { AnthropicLlm } from './anthropic.ts';
import { LOCAL_REPLY_MODEL, LocalReplyLlm } from './local-reply.ts';
import { OpenAiCompatibleLlm } from './openai.ts';
import type { LlmEngine } from './types.ts';

/** Models used when an agent names none. */
export const DEFAULT_LLM_MODELS = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-3-5-haiku-latest',
  groq: 'llama-3.1-8b-instant',
  local: LOCAL_REPLY_MODEL,
} as const;

/** Builds the LLM adapters from config: `<VENDOR>_BASE_URL` points any adapter at a compatible server. */
export function buildLlmRegistry(config: Config): EngineRegistry<LlmEngine> {
  const urls = config.vendors.baseUrls;
  if (config.agentTestPlatform === 'scripted') return scriptedLlmRegistry(urls.openai);
  return new EngineRegistry<LlmEngine>('llm')
    .register(
      'openai',
      new OpenAiCompatibleLlm({
        provider: 'openai',
        baseUrl: urls.openai ?? 'https://api.openai.com/v1',
        defaultModel: DEFAULT_LLM_MODELS.openai,
        includeUsageOption: true,
      }),
    )
    .register(
      'anthropic',
      new AnthropicLlm({
        baseUrl: urls.anthropic ?? 'https://api.anthropic.com',
        defaultModel: DEFAULT_LLM_MODELS.anthropic,
      }),
    )
    .register(
      'groq',
      new OpenAiCompatibleLlm({
        provider: 'groq',
        baseUrl: urls.groq ?? 'https://api.groq.com/openai/v1',
        defaultModel: DEFAULT_LLM_MODELS.groq,
        // Groq reports usage in `x_groq.usage` on the last chunk without being asked.
        includeUsageOption: false,
      }),
    )
    .register('local', new LocalReplyLlm());
}

/**
 * A scripted agent-test platform (config.agentTestPlatform `scripted`): whatever provider the agent names, its replies
 * come from the run's scripted LLM, an OpenAI-protocol server at OPENAI_BASE_URL, so an agent on any provider (the local
 * reply engine of a fresh machine included) is tested offline. Results label the LLM `scripted`.
 */
function scriptedLlmRegistry(baseUrl: string | undefined): EngineRegistry<LlmEngine> {
  if (!baseUrl) throw new Error('an agent test platform needs OPENAI_BASE_URL (its scripted LLM)');
  const registry = new EngineRegistry<LlmEngine>('llm');
  for (const provider of LLM_PROVIDERS)
    registry.register(
      provider,
      new OpenAiCompatibleLlm({
        provider,
        baseUrl,
        defaultModel: DEFAULT_LLM_MODELS[provider],
        includeUsageOption: true,
      }),
    );
  return registry;
}

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

const registries = new WeakMap<Infra, EngineRegistry<LlmEngine>>();

/** The LLM engines of this process, built once per Infra. */
export function llmEngines(infra: Infra): EngineRegistry<LlmEngine> {
  let r = registries.get(infra);
  if (!r) {
    r = buildLlmRegistry(infra.config);
    registries.set(infra, r);
  }
  return r;
}

/** Each LLM provider with its label and where this developer's key for it would come from (no header counted). */
export async function llmProviderInfo(infra: Infra, developerId: string): Promise<LlmProviderInfo[]> {
  const fallback = await defaultLlmProvider(infra, developerId);
  const engines = llmEngines(infra);
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
