import type { Config } from '../../kernel/config/index.ts';
import { LLM_PROVIDERS } from '../../contracts/providers.ts';
import { VENDORS } from '../../kernel/vendors.ts';
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
        baseUrl: urls.openai ?? VENDORS.openai.baseUrl,
        defaultModel: DEFAULT_LLM_MODELS.openai,
        includeUsageOption: true,
      }),
    )
    .register(
      'anthropic',
      new AnthropicLlm({
        baseUrl: urls.anthropic ?? VENDORS.anthropic.baseUrl,
        defaultModel: DEFAULT_LLM_MODELS.anthropic,
      }),
    )
    .register(
      'groq',
      new OpenAiCompatibleLlm({
        provider: 'groq',
        baseUrl: urls.groq ?? VENDORS.groq.baseUrl,
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
