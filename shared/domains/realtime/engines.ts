import type { AgentRow } from '../agents/db.ts';
import { agentLanguageModel } from '../agents/language-model.ts';
import type { EngineRegistry } from '../../engines/core/registry.ts';
import { resolveProviderKey, type ResolvedKey } from '../../platform/keys/provider-key.ts';
import type { SttEngine, SttRequest } from '../../engines/stt/types.ts';
import type { TtsEngine } from '../../engines/tts/types.ts';
import type { VadEngine } from '../../engines/vad/types.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { engineToApiError } from '../../kernel/errors/engine-error.ts';
import type { Config } from '../../kernel/config/index.ts';
import type { Infra } from '../../platform/infra.ts';

/** The speech engines a process has (built by the speech area). */
export interface SpeechRegistries {
  tts: EngineRegistry<TtsEngine>;
  stt: EngineRegistry<SttEngine>;
  vad: VadEngine;
  /** The local STT of calls: streaming pocketsphinx, or batch per utterance when its worker is not built. */
  liveStt: SttEngine;
}

/** The speech engines of this process (TTS, STT and the Silero VAD), from the speech area's registry. */
export function speechFor(infra: Infra): SpeechRegistries {
  return infra.engines;
}

/** The engines one session uses, with the keys resolved. */
export interface SessionEngines {
  stt: SttEngine;
  sttProvider: string;
  sttKey?: ResolvedKey;
  /** The local STT's model for this agent (biased to its words), when it is built; absent: the general model. */
  sttLanguageModel?: SttRequest['languageModel'];
  /**
   * The live STT that takes over when `stt` (a vendor's) fails mid-call: the local streaming recogniser, on phone
   * calls with REALTIME_PHONE_STT_LOCAL_FALLBACK (shared/engines/stt/fallback.ts). Billed as itself: nothing.
   */
  sttFallback?: { engine: SttEngine };
  tts: TtsEngine;
  ttsProvider: string;
  ttsKey?: ResolvedKey;
  vad: VadEngine;
}

export const PHONE_STT_HELP =
  'Phone sessions use REALTIME_PHONE_STT_PROVIDER (default "deepgram"; "default" = the local streaming ' +
  'recogniser), a streaming STT that takes 8 kHz audio, with a key (the platform env key such as ' +
  'DEEPGRAM_API_KEY, or a stored key via POST /v1/provider-keys). With REALTIME_PHONE_STT_LOCAL_FALLBACK (the ' +
  'default) a phone call without that key is heard by the local recogniser instead.';

/**
 * Picks and checks the engines of a session. The local `default` STT of a call is the streaming recogniser
 * (`speech.liveStt`). Phone sessions use REALTIME_PHONE_STT_PROVIDER, a streaming STT that takes 8 kHz audio; when
 * it has no key here, the local recogniser hears the call (REALTIME_PHONE_STT_LOCAL_FALLBACK, the default) or the
 * session is refused with a 400 `provider_unavailable` that says so (POST /v1/sessions/twilio calls this before
 * returning TwiML, so the developer learns it before a caller does).
 */
export async function resolveSessionEngines(
  infra: Infra,
  speech: SpeechRegistries,
  developerId: string,
  agent: AgentRow,
  channel: 'twilio' | 'direct',
  headers: Record<string, string | string[] | undefined> = {},
): Promise<SessionEngines> {
  let sttProvider =
    channel === 'twilio' ? infra.config.REALTIME_PHONE_STT_PROVIDER : directSttProvider(agent, infra.config);
  if (channel === 'twilio' && sttProvider !== 'default' && !speech.stt.has(sttProvider)) {
    throw new ApiError('provider_unavailable', { provider: sttProvider, detail: PHONE_STT_HELP }, 'stt');
  }
  let stt = sttProvider === 'default' ? speech.liveStt : lookup(() => speech.stt.get(sttProvider));
  if (channel === 'twilio' && sttProvider !== 'default') {
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
      if (channel === 'twilio' && infra.config.REALTIME_PHONE_STT_LOCAL_FALLBACK) {
        // No key for the phone STT here: the local recogniser hears the call (the session records `default`).
        sttProvider = 'default';
        stt = speech.liveStt;
      } else {
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
  }
  const ttsProvider = agent.tts_provider || 'default';
  const tts = lookup(() => speech.tts.get(ttsProvider));
  const ttsKey = (await resolveProviderKey(infra, { engine: tts, developerId, headers })) ?? undefined;
  // The local STT hears this agent's words better with its own model; one not built yet starts building and the
  // call goes on with the general model (a failure to read the agent's text does the same).
  const sttLanguageModel =
    stt.provider === 'default'
      ? ((await agentLanguageModel(infra, agent, infra.log).catch(() => null)) ?? undefined)
      : undefined;
  // A phone call on a vendor's STT falls back to the local recogniser when the vendor fails mid-call (a deployment
  // setting, not an agent's: the local recogniser's capacity is the operator's), in a language it hears (English).
  // Its general model: building the agent's own for every vendor call would cost the machine for calls that mostly
  // never need it.
  const sttFallback =
    channel === 'twilio' &&
    stt.provider !== 'default' &&
    infra.config.REALTIME_PHONE_STT_LOCAL_FALLBACK &&
    hears(speech.liveStt, agent.language)
      ? { engine: speech.liveStt }
      : undefined;
  return {
    stt,
    sttProvider,
    sttKey,
    sttLanguageModel,
    ...(sttFallback ? { sttFallback } : {}),
    tts,
    ttsProvider,
    ttsKey,
    vad: speech.vad,
  };
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

/** Whether a live STT takes this language (its capabilities' codes, by primary subtag; '*' any; '' auto). */
function hears(engine: SttEngine, language: string): boolean {
  const langs = engine.capabilities.languages;
  const primary = language.toLowerCase().split(/[-_]/)[0]!;
  return langs.includes('*') || language === '' || langs.some((l) => l.toLowerCase() === primary);
}

/** A registry lookup whose "not configured here" is answered in the API's terms (the sockets close with its code). */
function lookup<T>(get: () => T): T {
  try {
    return get();
  } catch (e) {
    throw engineToApiError(e);
  }
}
