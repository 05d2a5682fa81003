/**
 * The vendors the platform can call, one descriptor each: what it serves, the bring-your-own-key header it takes
 * (if any) and its API's default base URL. The provider lists of the contract, the BYOK headers, the keyed-vendor
 * config (`<VENDOR>_API_KEY`, `<VENDOR>_BASE_URL`) and the log redaction are all derived from this table, so a new
 * vendor is one entry here (plus its adapter and its double). It lives in the kernel because config and the logger
 * read it; the contract's lists (contracts/providers.ts) are built from it.
 *
 * Order matters: the contract's provider enums list vendors in this order.
 */
export type VendorCapability =
  | 'tts'
  | 'stt'
  | 'llm'
  | 'embeddings'
  | 'translate'
  | 'avatar'
  | 'lipsync'
  | 'generate'
  | 'analysis'
  /** Agents imported from the vendor's platform (POST /v1/agents/import). */
  | 'agent-import';

export interface VendorDescriptor {
  readonly capabilities: readonly VendorCapability[];
  /** `X-Provider-Key-<Name>`, CamelCase as the contract shows; vendors without one take stored keys only. */
  readonly byokHeader?: string;
  /** The vendor's API when `<VENDOR>_BASE_URL` names none (adapters that have one fixed API). */
  readonly baseUrl?: string;
}

export const VENDORS = {
  elevenlabs: { capabilities: ['tts', 'stt'], byokHeader: 'ElevenLabs', baseUrl: 'https://api.elevenlabs.io' },
  cartesia: { capabilities: ['tts'], byokHeader: 'Cartesia', baseUrl: 'https://api.cartesia.ai' },
  deepgram: { capabilities: ['tts', 'stt'], byokHeader: 'Deepgram', baseUrl: 'https://api.deepgram.com' },
  openai: {
    capabilities: ['tts', 'stt', 'llm', 'embeddings'],
    byokHeader: 'OpenAI',
    baseUrl: 'https://api.openai.com/v1',
  },
  azure: { capabilities: ['tts'] },
  google: { capabilities: ['tts'], baseUrl: 'https://texttospeech.googleapis.com' },
  polly: { capabilities: ['tts'] },
  playht: { capabilities: ['tts'], byokHeader: 'PlayHT', baseUrl: 'https://api.play.ht' },
  rime: { capabilities: ['tts'], byokHeader: 'Rime', baseUrl: 'https://users.rime.ai' },
  lmnt: { capabilities: ['tts'], baseUrl: 'https://api.lmnt.com' },
  hume: { capabilities: ['tts'], baseUrl: 'https://api.hume.ai' },
  replicate: { capabilities: ['tts', 'lipsync'], byokHeader: 'Replicate', baseUrl: 'https://api.replicate.com' },
  assemblyai: { capabilities: ['stt'], byokHeader: 'AssemblyAI', baseUrl: 'https://api.assemblyai.com' },
  anthropic: { capabilities: ['llm'], byokHeader: 'Anthropic', baseUrl: 'https://api.anthropic.com' },
  groq: { capabilities: ['stt', 'llm'], byokHeader: 'Groq', baseUrl: 'https://api.groq.com/openai/v1' },
  cohere: { capabilities: ['embeddings'], baseUrl: 'https://api.cohere.com' },
  voyage: { capabilities: ['embeddings'], baseUrl: 'https://api.voyageai.com/v1' },
  deepl: { capabilities: ['translate'] },
  heygen: { capabilities: ['avatar'], baseUrl: 'https://api.heygen.com' },
  synclabs: { capabilities: ['lipsync'], baseUrl: 'https://api.sync.so' },
  twelvelabs: { capabilities: ['analysis'], baseUrl: 'https://api.twelvelabs.io' },
  runway: { capabilities: ['generate'], baseUrl: 'https://api.dev.runwayml.com' },
  luma: { capabilities: ['generate'], baseUrl: 'https://api.lumalabs.ai' },
  vapi: { capabilities: ['agent-import'] },
} as const satisfies Record<string, VendorDescriptor>;

export type VendorId = keyof typeof VENDORS;
type Descriptors = { readonly [K in VendorId]: (typeof VENDORS)[K] & VendorDescriptor };

/** The vendors serving one capability, as a union type. */
export type VendorWith<C extends VendorCapability> = {
  [K in VendorId]: C extends Descriptors[K]['capabilities'][number] ? K : never;
}[VendorId];

/** Every vendor a key can be stored for, in the table's order. */
export const VENDOR_IDS = Object.keys(VENDORS) as VendorId[];

/** The vendors serving one capability, in the table's order. */
export function vendorsWith<C extends VendorCapability>(capability: C): VendorWith<C>[] {
  return VENDOR_IDS.filter((id) =>
    (VENDORS[id].capabilities as readonly VendorCapability[]).includes(capability),
  ) as VendorWith<C>[];
}

/** A vendor's descriptor by id (undefined for an id the table does not hold). */
export function vendorDescriptor(id: string): VendorDescriptor | undefined {
  return Object.hasOwn(VENDORS, id) ? (VENDORS as Record<string, VendorDescriptor>)[id] : undefined;
}

/** Header name for a vendor, e.g. `x-provider-key-elevenlabs` (Node lower-cases incoming header names). */
export function byokHeaderFor(vendor: string): string | null {
  const header = vendorDescriptor(vendor)?.byokHeader;
  return header ? `x-provider-key-${header.toLowerCase()}` : null;
}
