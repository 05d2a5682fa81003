import { vendorsWith } from '../kernel/vendors.ts';

/**
 * Provider identifiers the API accepts, by capability. `default` is the local engine that needs no key; the
 * vendors come from the kernel's vendor table (kernel/vendors.ts), in its order.
 * Lists are the contract's enums: agents validate ttsProvider/llmProvider against them.
 */
export const TTS_PROVIDERS = ['default', 'rhvoice', ...vendorsWith('tts')] as const;

/**
 * TTS engines that run on this machine and need no key: `default` (flite + espeak-ng) and the opt-in `rhvoice`
 * (installed by scripts/setup.sh only with RHVOICE=1; docs/speech.md).
 */
export const LOCAL_TTS_PROVIDERS: readonly string[] = ['default', 'rhvoice'];
/** How the local TTS engines are named to people (the portal's voice provider list). */
export const LOCAL_TTS_LABELS: Record<string, string> = {
  default: 'default (local, self-hosted)',
  rhvoice: 'RHVoice, local',
};
export const STT_PROVIDERS = ['default', ...vendorsWith('stt')] as const;
export type SttProvider = (typeof STT_PROVIDERS)[number];

/**
 * The contract's three (the OpenAI-kind provider first; its base URL is configurable, any compatible server),
 * plus `local` (extension): the local reply engine, a knowledge lookup that needs no key and is no language model.
 */
export const LLM_PROVIDERS = [...vendorsWith('llm'), 'local'] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];
/** How each LLM provider is named to people (the portal and the API's engine listing). */
export const LLM_PROVIDER_LABELS: Record<LlmProvider, string> = {
  openai: 'OpenAI (or an OpenAI-compatible server)',
  anthropic: 'Anthropic',
  groq: 'Groq',
  local: 'Local reply engine (knowledge lookup, not a language model)',
};

export const EMBEDDING_PROVIDERS = ['default', ...vendorsWith('embeddings')] as const;

/** A vendor's bring-your-own-key header (`x-provider-key-<name>`) and every vendor a key can be stored for. */
export { byokHeaderFor, VENDOR_IDS as KEYED_VENDORS } from '../kernel/vendors.ts';
