import type { Config } from '../../../kernel/config/index.ts';
import { vendorDescriptor, vendorsWith, type VendorWith } from '../../../kernel/vendors.ts';
import type { EngineRegistry } from '../../core/registry.ts';
import type { SttEngine } from '../types.ts';
import { AssemblyAiStt } from './assemblyai.ts';
import { DeepgramStt } from './deepgram.ts';
import { ElevenLabsStt } from './elevenlabs.ts';
import { GroqStt, OpenAiStt } from './openai.ts';

/** The adapter of every STT vendor of the vendor table (kernel/vendors.ts): a vendor without one fails tsc. */
const ADAPTERS: Record<VendorWith<'stt'>, new (opts: { baseUrl?: string }) => SttEngine> = {
  elevenlabs: ElevenLabsStt,
  deepgram: DeepgramStt,
  openai: OpenAiStt,
  assemblyai: AssemblyAiStt,
  groq: GroqStt,
};

/**
 * Registers the adapter of every STT vendor in the vendor table. All are always registered: keys are resolved per
 * request and arrive as `req.apiKey`; base URLs come from `<VENDOR>_BASE_URL`, else the table's default.
 */
export function registerSttVendors(registry: EngineRegistry<SttEngine>, config: Config): void {
  for (const id of vendorsWith('stt')) {
    registry.register(id, new ADAPTERS[id]({ baseUrl: config.vendors.baseUrls[id] ?? vendorDescriptor(id)?.baseUrl }));
  }
}
