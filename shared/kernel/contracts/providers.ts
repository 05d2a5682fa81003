/**
 * Provider identifiers the API accepts, by capability. `default` is the local engine that needs no key.
 * Lists are the contract's enums: agents validate ttsProvider/llmProvider against them.
 */
export const TTS_PROVIDERS = [
  'default',
  'elevenlabs',
  'cartesia',
  'deepgram',
  'openai',
  'azure',
  'google',
  'polly',
  'playht',
  'rime',
  'lmnt',
  'hume',
  'replicate',
] as const;

export const STT_PROVIDERS = ['default', 'deepgram', 'assemblyai', 'openai', 'elevenlabs', 'groq'] as const;
export type SttProvider = (typeof STT_PROVIDERS)[number];

/**
 * The contract's three (the OpenAI-kind provider first; its base URL is configurable, any compatible server),
 * plus `local` (extension): the local reply engine, a knowledge lookup that needs no key and is no language model.
 */
export const LLM_PROVIDERS = ['openai', 'anthropic', 'groq', 'local'] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];
/** LLM providers that need a vendor key. */
const KEYED_LLM_PROVIDERS = LLM_PROVIDERS.filter((p) => p !== 'local');
/** How each LLM provider is named to people (the portal and the API's engine listing). */
export const LLM_PROVIDER_LABELS: Record<LlmProvider, string> = {
  openai: 'OpenAI (or an OpenAI-compatible server)',
  anthropic: 'Anthropic',
  groq: 'Groq',
  local: 'Local reply engine (knowledge lookup, not a language model)',
};

export const EMBEDDING_PROVIDERS = ['default', 'openai', 'cohere', 'voyage'] as const;

/**
 * Bring-your-own-key headers: `X-Provider-Key-<Name>`, one per vendor, CamelCase as the contract shows.
 * Mapped to the vendor id the engines use. Other vendors take stored keys (POST /v1/provider-keys) only.
 */
export const BYOK_HEADERS = {
  ElevenLabs: 'elevenlabs', // TTS/STT
  OpenAI: 'openai', // LLM
  Anthropic: 'anthropic', // LLM
  Deepgram: 'deepgram', // TTS/STT
  AssemblyAI: 'assemblyai', // STT
  Cartesia: 'cartesia', // TTS
  PlayHT: 'playht', // TTS
  Rime: 'rime', // TTS
  Groq: 'groq', // LLM/STT
  Replicate: 'replicate', // TTS (model hosting)
} as const;

/** Every vendor a key can be stored for (header vendors plus those reachable only through stored keys). */
export const KEYED_VENDORS = [
  ...new Set([
    ...Object.values(BYOK_HEADERS),
    ...TTS_PROVIDERS.filter((p) => p !== 'default'),
    ...STT_PROVIDERS.filter((p) => p !== 'default'),
    ...KEYED_LLM_PROVIDERS,
    'cohere',
    'voyage',
    'deepl',
    'heygen',
    'synclabs',
    'twelvelabs',
    'runway',
    'luma',
    'vapi',
  ]),
] as string[];

/** Header name for a vendor, e.g. `x-provider-key-elevenlabs` (Node lower-cases incoming header names). */
export function byokHeaderFor(vendor: string): string | null {
  const entry = Object.entries(BYOK_HEADERS).find(([, v]) => v === vendor);
  return entry ? `x-provider-key-${entry[0].toLowerCase()}` : null;
}
