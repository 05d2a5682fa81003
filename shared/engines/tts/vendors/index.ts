import type { Config } from '../../../kernel/config/index.ts';
import { vendorDescriptor, vendorsWith, type VendorWith } from '../../../kernel/vendors.ts';
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

/** The adapter of every TTS vendor of the vendor table (kernel/vendors.ts): a vendor without one fails tsc. */
const ADAPTERS: Record<VendorWith<'tts'>, new (opts: { baseUrl?: string }) => TtsEngine> = {
  elevenlabs: ElevenLabsTts,
  cartesia: CartesiaTts,
  deepgram: DeepgramTts,
  openai: OpenAiTts,
  azure: AzureTts,
  google: GoogleTts,
  polly: PollyTts,
  playht: PlayHtTts,
  rime: RimeTts,
  lmnt: LmntTts,
  hume: HumeTts,
  replicate: ReplicateTts,
};

/**
 * Registers the adapter of every TTS vendor in the vendor table. All are always registered: keys are resolved per
 * request (caller header → stored key → platform key) and arrive as `req.apiKey`; base URLs come from
 * `<VENDOR>_BASE_URL`, else the table's default.
 */
export function registerTtsVendors(registry: EngineRegistry<TtsEngine>, config: Config): void {
  for (const id of vendorsWith('tts')) {
    registry.register(id, new ADAPTERS[id]({ baseUrl: config.vendors.baseUrls[id] ?? vendorDescriptor(id)?.baseUrl }));
  }
}
