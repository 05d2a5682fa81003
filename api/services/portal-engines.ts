import type { z } from 'zod';
import { TTS_PROVIDERS } from '../../shared/contracts/providers.ts';
import type { VoiceEngineInfo } from '../../shared/contracts/portal.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { speechFor } from '../../shared/domains/realtime/engines.ts';

type Info = z.infer<typeof VoiceEngineInfo>;

/**
 * Each voice engine with where this developer's key for it would come from, resolved as a session resolves it
 * (stored key → platform key; a per-request header is not counted), so the agent form can say before saving
 * whether "talk to it" will speak.
 */
export async function voiceEngineInfo(infra: Infra, developerId: string): Promise<Info[]> {
  const { tts } = speechFor(infra);
  return Promise.all(
    TTS_PROVIDERS.map(async (id): Promise<Info> => {
      if (!tts.has(id)) return { id, key: 'not-installed', usable: false };
      if (!tts.get(id).capabilities.requiresKey) return { id, key: 'not-needed', usable: true };
      if (infra.config.vendors.platformKeys[id]) return { id, key: 'platform', usable: true };
      if (await infra.storedKeys.get(developerId, id)) return { id, key: 'stored', usable: true };
      return { id, key: 'none', usable: false };
    }),
  );
}
