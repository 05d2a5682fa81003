import type { AgentRow } from '../agents/db.ts';
import type { EngineRegistry } from '../../engines/core/registry.ts';
import { resolveProviderKey, type ResolvedKey } from '../../platform/keys/provider-key.ts';
import type { SttEngine } from '../../engines/stt/types.ts';
import type { TtsEngine } from '../../engines/tts/types.ts';
import type { VadEngine } from '../../engines/vad/types.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { engineToApiError } from '../../kernel/errors/engine-error.ts';
import { speechEngines } from '../../engines/speech-registry.ts';
import type { Config } from '../../kernel/config/index.ts';
import type { Infra } from '../../platform/infra.ts';

/** The speech engines a process has (built by the speech area). */
export interface SpeechRegistries {
  tts: EngineRegistry<TtsEngine>;
  stt: EngineRegistry<SttEngine>;
  vad: VadEngine;
}

/** The speech engines of this process (TTS, STT and the Silero VAD), from the speech area's registry. */
export function speechFor(infra: Infra): SpeechRegistries {
  return speechEngines(infra);
}

/** The engines one session uses, with the keys resolved. */
export interface SessionEngines {
  stt: SttEngine;
  sttProvider: string;
  sttKey?: ResolvedKey;
  tts: TtsEngine;
  ttsProvider: string;
  ttsKey?: ResolvedKey;
  vad: VadEngine;
}

export const PHONE_STT_HELP =
  'Phone calls carry 8 kHz audio, which the local default STT engine cannot transcribe. Configure a provider STT ' +
  'for phone sessions: set REALTIME_PHONE_STT_PROVIDER (default "deepgram") and give it a key (the platform env ' +
  'key such as DEEPGRAM_API_KEY, or a stored key via POST /v1/provider-keys).';

/**
 * Picks and checks the engines of a session. Phone sessions need a streaming provider STT that takes 8 kHz audio;
 * when none is usable this throws a 400 `provider_unavailable` that says so (POST /v1/sessions/twilio calls it
 * before returning TwiML, so the developer learns it before a caller does).
 */
export async function resolveSessionEngines(
  infra: Infra,
  speech: SpeechRegistries,
  developerId: string,
  agent: AgentRow,
  channel: 'twilio' | 'direct',
  headers: Record<string, string | string[] | undefined> = {},
): Promise<SessionEngines> {
  const sttProvider =
    channel === 'twilio' ? infra.config.REALTIME_PHONE_STT_PROVIDER : directSttProvider(agent, infra.config);
  if (channel === 'twilio' && (sttProvider === 'default' || !speech.stt.has(sttProvider))) {
    throw new ApiError('provider_unavailable', { provider: sttProvider, detail: PHONE_STT_HELP }, 'stt');
  }
  const stt = lookup(() => speech.stt.get(sttProvider));
  if (channel === 'twilio') {
    const rates = stt.capabilities.sampleRates;
    if (!stt.capabilities.streaming || (rates.length > 0 && !rates.includes(8000))) {
      throw new ApiError('provider_unavailable', { provider: sttProvider, detail: PHONE_STT_HELP }, 'stt');
    }
  }
  let sttKey: ResolvedKey | undefined;
  if (stt.capabilities.requiresKey) {
    try {
      sttKey = await resolveProviderKey(infra, { vendor: sttProvider, developerId, headers });
    } catch {
      throw new ApiError(
        'provider_unavailable',
        {
          provider: sttProvider,
          detail: `no API key for ${sttProvider}. ${channel === 'twilio' ? PHONE_STT_HELP : ''}`,
        },
        'stt',
      );
    }
  }
  const ttsProvider = agent.tts_provider || 'default';
  const tts = lookup(() => speech.tts.get(ttsProvider));
  const ttsKey = (await resolveProviderKey(infra, { engine: tts, developerId, headers })) ?? undefined;
  return { stt, sttProvider, sttKey, tts, ttsProvider, ttsKey, vad: speech.vad };
}

/**
 * Direct sessions use the agent's metadata.sttProvider when set, else the local default engine. On an agent test's
 * private platform a vendor STT is answered by the phone STT, which there is the run's simulated STT (a vendor's
 * key is not on an offline platform, and a test never sends audio to a paid STT).
 */
function directSttProvider(agent: AgentRow, config: Config): string {
  const v = agent.metadata?.sttProvider;
  if (typeof v !== 'string' || !v || v === 'default') return 'default';
  return config.agentTestPlatform ? config.REALTIME_PHONE_STT_PROVIDER : v;
}

/** A registry lookup whose "not configured here" is answered in the API's terms (the sockets close with its code). */
function lookup<T>(get: () => T): T {
  try {
    return get();
  } catch (e) {
    throw engineToApiError(e);
  }
}
