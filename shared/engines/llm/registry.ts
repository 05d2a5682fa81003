import type { Config } from '../../config/index.ts';
import type { Infra } from '../../runtime/infra.ts';
import { EngineRegistry } from '../core/registry.ts';
import { resolveProviderKey, type ResolvedKey, type StoredKeyLookup } from '../core/provider-key.ts';
import { AnthropicLlm } from './anthropic.ts';
import { OpenAiCompatibleLlm } from './openai.ts';
import type { LlmEngine } from './types.ts';

/** Models used when an agent names none. */
export const DEFAULT_LLM_MODELS = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-3-5-haiku-latest',
  groq: 'llama-3.1-8b-instant',
} as const;

/** Builds the LLM adapters from config: `<VENDOR>_BASE_URL` points any adapter at a compatible server. */
export function buildLlmRegistry(config: Config): EngineRegistry<LlmEngine> {
  const urls = config.vendors.baseUrls;
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
    );
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

/** The developer's stored provider keys (resolveProviderKey's second step). */
export function storedKeysOf(infra: Infra): StoredKeyLookup {
  return infra.storedKeys;
}

/**
 * The key for an LLM call: `X-Provider-Key-<Vendor>` header → stored key → platform key. Throws 400
 * `provider_unavailable` when none is configured.
 */
export function resolveLlmKey(
  infra: Infra,
  provider: string,
  developerId: string,
  headers: Record<string, string | string[] | undefined> = {},
): Promise<ResolvedKey> {
  return resolveProviderKey({
    vendor: provider,
    developerId,
    headers,
    stored: storedKeysOf(infra),
    platform: infra.config.vendors.platformKeys,
  });
}
