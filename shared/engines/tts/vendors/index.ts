import type { Config } from '../../../kernel/config/index.ts';
import type { EngineRegistry } from '../../core/registry.ts';
import type { TtsEngine } from '../types.ts';
import { AzureTts } from './azure.ts';
import { CartesiaTts } from './cartesia.ts';
import { DeepgramTts } from './deepgram.ts';
import { ElevenLabsTts } from './elevenlabs.ts';
import { GoogleTts } from './google.ts';
import { HumeTts } from './hume.ts';
import { LmntTts } from './lmnt.ts';
import { OpenAiTts } from './openai.ts';
import { PlayHtTts } from './playht.ts';
import { PollyTts } from './polly.ts';
import { ReplicateTts } from './replicate.ts';
import { RimeTts } from './rime.ts';

/**
 * Registers every brand-named TTS adapter. All are always registered: keys are resolved per request (caller
 * header → stored key → platform key) and arrive as `req.apiKey`; base URLs come from `<VENDOR>_BASE_URL`.
 */
export function registerTtsVendors(registry: EngineRegistry<TtsEngine>, config: Config): void {
  const base = config.vendors.baseUrls;
  const adapters: TtsEngine[] = [
    new ElevenLabsTts({ baseUrl: base.elevenlabs }),
    new CartesiaTts({ baseUrl: base.cartesia }),
    new DeepgramTts({ baseUrl: base.deepgram }),
    new OpenAiTts({ baseUrl: base.openai }),
    new AzureTts({ baseUrl: base.azure }),
    new GoogleTts({ baseUrl: base.google }),
    new PollyTts({ baseUrl: base.polly }),
    new PlayHtTts({ baseUrl: base.playht }),
    new RimeTts({ baseUrl: base.rime }),
    new LmntTts({ baseUrl: base.lmnt }),
    new HumeTts({ baseUrl: base.hume }),
    new ReplicateTts({ baseUrl: base.replicate }),
  ];
  for (const a of adapters) registry.register(a.provider, a);
}
