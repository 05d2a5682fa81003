import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { pcmStream } from '../../core/vendor-audio.ts';
import { adapterOptions, checkSampleRate, clamp, requireKey, vendorModel } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface RimeTtsOptions {
  /** Default https://users.rime.ai (env RIME_BASE_URL). */
  baseUrl?: string;
  model?: string;
  voice?: string;
  sampleRate?: 8000 | 16000 | 22050 | 24000;
}

const DEFAULTS = { baseUrl: 'https://users.rime.ai', model: 'mistv2', voice: 'cove', sampleRate: 24000 } as const;

/** Rime names languages with three letters. */
const LANGS: Record<string, string> = { en: 'eng', es: 'spa', fr: 'fra', de: 'ger' };

const VOICES: StockVoice[] = [
  ['cove', 'Cove', 'en', 'male'],
  ['marsh', 'Marsh', 'en', 'male'],
  ['bayou', 'Bayou', 'en', 'male'],
  ['lagoon', 'Lagoon', 'en', 'female'],
  ['moraine', 'Moraine', 'en', 'female'],
  ['abbie', 'Abbie', 'en', 'female'],
  ['allison', 'Allison', 'en', 'female'],
  ['amber', 'Amber', 'en', 'female'],
];

/**
 * Rime: `POST /v1/rime-tts` (Bearer) with `Accept: audio/pcm`, which streams raw s16le. Rime's `speedAlpha` is
 * a duration factor (above 1 is slower), so it is the inverse of our speed.
 */
export class RimeTts extends TtsEngine {
  readonly provider = 'rime';
  readonly label = 'rime.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: false, requiresKey: true };
  private readonly opts: Required<RimeTtsOptions>;

  constructor(opts: RimeTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    checkSampleRate(this.label, this.opts.sampleRate, [8000, 16000, 22050, 24000]);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const body: Record<string, unknown> = {
      speaker: req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice,
      text: req.text,
      modelId: vendorModel(req.model, this.opts.model),
      samplingRate: this.opts.sampleRate,
      speedAlpha: Number((1 / clamp(req.speed, 0.25, 4)).toFixed(3)),
    };
    const lang = req.language ? LANGS[req.language.slice(0, 2)] : undefined;
    if (lang) body.lang = lang;
    const res = await vendorAudio(this.provider, `${this.opts.baseUrl}/v1/rime-tts`, {
      method: 'POST',
      // Synthesis only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { authorization: `Bearer ${key}`, accept: 'audio/pcm', 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: req.signal,
    });
    return { sampleRate: this.opts.sampleRate, chunks: pcmStream(this.provider, res.body) };
  }
}
