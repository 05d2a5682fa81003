import type { Config } from '../../../kernel/config/index.ts';
import type { EngineRegistry } from '../../core/registry.ts';
import type { SttEngine } from '../types.ts';
import { AssemblyAiStt } from './assemblyai.ts';
import { DeepgramStt } from './deepgram.ts';
import { ElevenLabsStt } from './elevenlabs.ts';
import { GroqStt, OpenAiStt } from './openai.ts';

/**
 * Registers every brand-named STT adapter. All are always registered: keys are resolved per request and arrive
 * as `req.apiKey`; base URLs come from `<VENDOR>_BASE_URL`.
 */
export function registerSttVendors(registry: EngineRegistry<SttEngine>, config: Config): void {
  const base = config.vendors.baseUrls;
  const adapters: SttEngine[] = [
    new DeepgramStt({ baseUrl: base.deepgram }),
    new AssemblyAiStt({ baseUrl: base.assemblyai }),
    new OpenAiStt({ baseUrl: base.openai }),
    new ElevenLabsStt({ baseUrl: base.elevenlabs }),
    new GroqStt({ baseUrl: base.groq }),
  ];
  for (const a of adapters) registry.register(a.provider, a);
}
