import { getSyncedId, recordSync, type AgentRow } from '../../shared/domains/agents/db.ts';
import { resolveProviderKey } from '../../shared/platform/keys/provider-key.ts';
import type { SyncResponse } from '../../shared/contracts/agents.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { isEngineError, type EngineError } from '../../shared/kernel/errors/engine-error.ts';
import { trimSlash, vendorFetch } from '../../shared/engines/core/vendor-client.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { requireActiveAgent } from './agents.ts';

const VAPI_DEFAULT_BASE = 'https://api.vapi.ai';
const SYNC_TIMEOUT_MS = 15_000;

/** Our TTS provider ids → Vapi voice providers (absent: Vapi's own default voice is kept). */
const VAPI_VOICE_PROVIDERS: Record<string, string> = {
  elevenlabs: '11labs',
  cartesia: 'cartesia',
  deepgram: 'deepgram',
  openai: 'openai',
  azure: 'azure',
  playht: 'playht',
  rime: 'rime-ai',
  lmnt: 'lmnt',
  hume: 'hume',
};

/**
 * The Vapi assistant for an agent (`POST /assistant` to create, `PATCH /assistant/{id}` to update): name (Vapi
 * allows 40 characters), firstMessage, model {provider, model, messages: [system], temperature, maxTokens},
 * voice {provider, voiceId}, transcriber {provider: deepgram, language}, metadata (our agent id).
 */
export function vapiAssistant(agent: AgentRow): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: agent.name.slice(0, 40),
    model: {
      provider: agent.llm_provider,
      model: agent.llm_model,
      messages: agent.system_prompt ? [{ role: 'system', content: agent.system_prompt }] : [],
      temperature: agent.temperature,
      maxTokens: agent.max_tokens,
    },
    transcriber: { provider: 'deepgram', language: agent.language.split('-')[0] },
    metadata: { ...agent.metadata, platformAgentId: agent.id },
  };
  if (agent.first_message) body.firstMessage = agent.first_message;
  const voiceProvider = VAPI_VOICE_PROVIDERS[agent.tts_provider];
  if (voiceProvider && agent.voice_id !== 'default') body.voice = { provider: voiceProvider, voiceId: agent.voice_id };
  return body;
}

/**
 * Pushes the agent to Vapi: creates the assistant on first sync, updates it afterwards (recreating it when it was
 * deleted on Vapi's side), and stores the external id. The Vapi key is the developer's stored `vapi` key or
 * the platform's `VAPI_API_KEY`; `VAPI_BASE_URL` points at another endpoint (a test double).
 */
export async function syncAgent(
  infra: Infra,
  developerId: string,
  agentId: string,
  provider: 'vapi',
): Promise<SyncResponse> {
  const agent = await requireActiveAgent(infra.db, developerId, agentId);
  if (agent.llm_provider === 'local') {
    // Vapi has no counterpart of a lookup that runs on this platform: syncing it would make a broken assistant.
    throw new ApiError(
      'validation_failed',
      {
        detail:
          'the local reply engine runs only on this platform; give the agent an LLM vendor (openai, anthropic, groq) before syncing it to Vapi',
      },
      'llmProvider',
    );
  }
  const key = await resolveProviderKey(infra, { vendor: provider, developerId });
  const base = trimSlash(infra.config.vendors.baseUrls.vapi ?? VAPI_DEFAULT_BASE);
  const body = vapiAssistant(agent);
  const known = await getSyncedId(infra.db, developerId, agentId, provider);

  let externalId: string | null = null;
  if (known) {
    const res = await call(`${base}/assistant/${encodeURIComponent(known)}`, 'PATCH', key.key, body);
    if (res.status !== 404) externalId = readId(res, known);
  }
  if (!externalId) externalId = readId(await call(`${base}/assistant`, 'POST', key.key, body), null);
  await recordSync(infra.db, developerId, agentId, provider, externalId);
  return { synced: true, externalAgentId: externalId, provider };
}

interface VendorResponse {
  status: number;
  json: unknown;
}

/**
 * One Vapi call through the vendor client, within one deadline for the whole call. PATCH sends the whole
 * assistant, so sending it again leaves the same assistant and it may be retried; POST creates one, so it is sent
 * again only when Vapi never received it (refused connection, 429). A PATCH of an assistant Vapi no longer has
 * answers 404 (the caller creates a new one); every other failure is the API's error below.
 */
async function call(url: string, method: 'POST' | 'PATCH', apiKey: string, body: unknown): Promise<VendorResponse> {
  const signal = AbortSignal.timeout(SYNC_TIMEOUT_MS);
  let res: Response;
  let text: string;
  try {
    res = await vendorFetch('vapi', url, {
      method,
      headers: { authorization: `Bearer ${apiKey}` },
      json: body,
      signal,
      idempotent: method === 'PATCH',
    });
    text = await res.text();
  } catch (e) {
    if (isEngineError(e) && e.status === 404 && method === 'PATCH') return { status: 404, json: null };
    throw syncError(e);
  }
  return { status: res.status, json: parseJson(text) };
}

/** A failed Vapi call as the API's answer: a refused key is the developer's to fix, the rest is Vapi's fault. */
function syncError(e: unknown): ApiError {
  const status = isEngineError(e) ? e.status : undefined;
  if (status === 401 || status === 403) {
    return new ApiError(
      'provider_unavailable',
      { provider: 'vapi', detail: `Vapi rejected the API key (HTTP ${status})` },
      'provider',
    );
  }
  if (status !== undefined) {
    const msg = (parseJson((e as EngineError).vendorBody ?? '') as { message?: unknown } | null)?.message;
    const detail = `HTTP ${status}${msg ? `: ${String(Array.isArray(msg) ? msg.join('; ') : msg).slice(0, 300)}` : ''}`;
    return new ApiError('upstream_error', { provider: 'vapi', detail });
  }
  // No answer, or one that broke off: the deadline, or the network.
  const timedOut = isEngineError(e) ? e.kind === 'timeout' : (e as Error).name === 'TimeoutError';
  return timedOut
    ? new ApiError('upstream_timeout', { provider: 'vapi' })
    : new ApiError('upstream_error', { provider: 'vapi', detail: 'unreachable' });
}

/** The answer's JSON, or null when it is not JSON (readId then reports the missing id). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function readId(res: VendorResponse, fallback: string | null): string {
  const id = (res.json as { id?: unknown })?.id;
  if (typeof id === 'string' && id) return id;
  if (fallback) return fallback;
  throw new ApiError('upstream_error', { provider: 'vapi', detail: 'the response carried no assistant id' });
}
