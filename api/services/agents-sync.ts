import { getSyncedId, recordSync, type AgentRow } from '../../shared/domains/agents/db.ts';
import { resolveProviderKey } from '../../shared/platform/keys/provider-key.ts';
import type { SyncResponse } from '../../shared/kernel/contracts/agents.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
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
  const base = (infra.config.vendors.baseUrls.vapi ?? VAPI_DEFAULT_BASE).replace(/\/+$/, '');
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

async function call(url: string, method: string, apiKey: string, body: unknown): Promise<VendorResponse> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(SYNC_TIMEOUT_MS),
    });
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') throw new ApiError('upstream_timeout', { provider: 'vapi' });
    throw new ApiError('upstream_error', { provider: 'vapi', detail: 'unreachable' });
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON: handled by status below */
  }
  if (res.status === 401 || res.status === 403) {
    throw new ApiError(
      'provider_unavailable',
      { provider: 'vapi', detail: `Vapi rejected the API key (HTTP ${res.status})` },
      'provider',
    );
  }
  if (res.status === 404 && method === 'PATCH') return { status: 404, json };
  if (!res.ok) {
    const msg = (json as { message?: unknown })?.message;
    const detail = `HTTP ${res.status}${msg ? `: ${String(Array.isArray(msg) ? msg.join('; ') : msg).slice(0, 300)}` : ''}`;
    throw new ApiError('upstream_error', { provider: 'vapi', detail });
  }
  return { status: res.status, json };
}

function readId(res: VendorResponse, fallback: string | null): string {
  const id = (res.json as { id?: unknown })?.id;
  if (typeof id === 'string' && id) return id;
  if (fallback) return fallback;
  throw new ApiError('upstream_error', { provider: 'vapi', detail: 'the response carried no assistant id' });
}
