import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { pcmStream } from '../../core/vendor-audio.ts';
import { adapterOptions, checkSampleRate, clamp, requireKey, vendorModel } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface CartesiaTtsOptions {
  /** Default https://api.cartesia.ai (env CARTESIA_BASE_URL). */
  baseUrl?: string;
  model?: string;
  voice?: string;
  sampleRate?: 8000 | 16000 | 22050 | 24000 | 44100 | 48000;
  /** The `Cartesia-Version` header (the API is versioned by date). */
  apiVersion?: string;
}

/** Output rates Cartesia produces for raw PCM. */
const RATES: readonly number[] = [8000, 16000, 22050, 24000, 44100, 48000];
const DEFAULTS = {
  baseUrl: 'https://api.cartesia.ai',
  model: 'sonic-3',
  voice: 'a0e99841-438c-4a64-b679-ae501e7d6091',
  sampleRate: 24000,
  apiVersion: '2025-04-16',
} as const;

const VOICES: StockVoice[] = [
  ['a0e99841-438c-4a64-b679-ae501e7d6091', 'Barbershop Man', 'en', 'male'],
  ['79a125e8-cd45-4c13-8a67-188112f4dd22', 'British Lady', 'en', 'female'],
  ['f786b574-daa5-4673-aa0c-cbe3e8534c02', 'Katie', 'en', 'female'],
  ['228fca29-3a0a-435c-8728-5cb483251068', 'Kiefer', 'en', 'male'],
];

/**
 * Cartesia Sonic over `POST /tts/bytes` (`X-API-Key`, `Cartesia-Version`), asking for a raw pcm_s16le container;
 * the bytes stream as they are generated.
 */
export class CartesiaTts extends TtsEngine {
  readonly provider = 'cartesia';
  readonly label = 'cartesia.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: false, requiresKey: true };
  private readonly opts: Required<CartesiaTtsOptions>;

  constructor(opts: CartesiaTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    checkSampleRate(this.label, this.opts.sampleRate, RATES);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(this.opts.apiVersion)) throw new Error(`${this.label}: apiVersion is a date`);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const rate = req.sampleRate && RATES.includes(req.sampleRate) ? req.sampleRate : this.opts.sampleRate;
    const body: Record<string, unknown> = {
      model_id: vendorModel(req.model, this.opts.model),
      transcript: req.text,
      voice: { mode: 'id', id: req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: rate },
      language: (req.language || 'en').slice(0, 2),
    };
    // Sonic 3 takes generation_config.speed in 0.6-1.5.
    if (req.speed !== 1) body.generation_config = { speed: clamp(req.speed, 0.6, 1.5) };
    const res = await vendorAudio(this.provider, `${this.opts.baseUrl}/tts/bytes`, {
      method: 'POST',
      // Synthesis only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { 'x-api-key': key, 'cartesia-version': this.opts.apiVersion, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: req.signal,
    });
    return { sampleRate: rate, chunks: pcmStream(this.provider, res.body) };
  }
}
