import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { pcmStream } from '../../core/vendor-audio.ts';
import { adapterOptions, checkSampleRate, clamp, requireKey } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface DeepgramTtsOptions {
  /** Default https://api.deepgram.com (env DEEPGRAM_BASE_URL). */
  baseUrl?: string;
  /** Deepgram's voices are models: `aura-2-<name>-<lang>`. */
  voice?: string;
  sampleRate?: 8000 | 16000 | 24000 | 32000 | 48000;
}

/** Output rates Aura produces for linear16. */
const RATES: readonly number[] = [8000, 16000, 24000, 32000, 48000];
const DEFAULTS = { baseUrl: 'https://api.deepgram.com', voice: 'aura-2-thalia-en', sampleRate: 24000 } as const;

const VOICES: StockVoice[] = [
  ['aura-2-thalia-en', 'Thalia', 'en', 'female'],
  ['aura-2-andromeda-en', 'Andromeda', 'en', 'female'],
  ['aura-2-asteria-en', 'Asteria', 'en', 'female'],
  ['aura-2-luna-en', 'Luna', 'en', 'female'],
  ['aura-2-helena-en', 'Helena', 'en', 'female'],
  ['aura-2-apollo-en', 'Apollo', 'en', 'male'],
  ['aura-2-arcas-en', 'Arcas', 'en', 'male'],
  ['aura-2-orion-en', 'Orion', 'en', 'male'],
  ['aura-2-zeus-en', 'Zeus', 'en', 'male'],
  ['aura-2-celeste-es', 'Celeste', 'es', 'female'],
];

/**
 * Deepgram Aura: `POST /v1/speak?model=<voice>&encoding=linear16&container=none&sample_rate=<n>` with
 * `Authorization: Token <key>` and `{text}`; raw linear16 streams back as it is generated.
 */
export class DeepgramTts extends TtsEngine {
  readonly provider = 'deepgram';
  readonly label = 'deepgram.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: false, requiresKey: true };
  private readonly opts: Required<DeepgramTtsOptions>;

  constructor(opts: DeepgramTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    checkSampleRate(this.label, this.opts.sampleRate, RATES);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const rate = req.sampleRate && RATES.includes(req.sampleRate) ? req.sampleRate : this.opts.sampleRate;
    const q = new URLSearchParams({
      model: req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice,
      encoding: 'linear16',
      container: 'none',
      sample_rate: String(rate),
    });
    // Aura 2 takes speed in 0.7-1.5.
    if (req.speed !== 1) q.set('speed', String(clamp(req.speed, 0.7, 1.5)));
    const res = await vendorAudio(this.provider, `${this.opts.baseUrl}/v1/speak?${q}`, {
      method: 'POST',
      // Synthesis only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { authorization: `Token ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: req.text }),
      signal: req.signal,
    });
    return { sampleRate: rate, chunks: pcmStream(this.provider, res.body) };
  }
}
