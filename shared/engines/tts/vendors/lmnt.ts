import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { pcmStream } from '../../core/vendor-audio.ts';
import { adapterOptions, checkSampleRate, requireKey, vendorModel } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface LmntTtsOptions {
  /** Default https://api.lmnt.com (env LMNT_BASE_URL). */
  baseUrl?: string;
  model?: string;
  voice?: string;
  sampleRate?: 8000 | 16000 | 24000;
}

const DEFAULTS = { baseUrl: 'https://api.lmnt.com', model: 'blizzard', voice: 'leah', sampleRate: 24000 } as const;

const VOICES: StockVoice[] = [
  ['leah', 'Leah', 'en', 'female'],
  ['lily', 'Lily', 'en', 'female'],
  ['ava', 'Ava', 'en', 'female'],
  ['natalie', 'Natalie', 'en', 'female'],
  ['juniper', 'Juniper', 'en', 'female'],
  ['daniel', 'Daniel', 'en', 'male'],
  ['brandon', 'Brandon', 'en', 'male'],
  ['zeke', 'Zeke', 'en', 'male'],
  ['tyler', 'Tyler', 'en', 'male'],
  ['morgan', 'Morgan', 'en', 'neutral'],
];

/** LMNT: `POST /v1/ai/speech/bytes` (`X-API-Key`) with `format: pcm_s16le`, a streamable format; the body streams. */
export class LmntTts extends TtsEngine {
  readonly provider = 'lmnt';
  readonly label = 'lmnt.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: false, requiresKey: true };
  private readonly opts: Required<LmntTtsOptions>;

  constructor(opts: LmntTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    checkSampleRate(this.label, this.opts.sampleRate, [8000, 16000, 24000]);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const body: Record<string, unknown> = {
      voice: req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice,
      text: req.text,
      model: vendorModel(req.model, this.opts.model),
      format: 'pcm_s16le',
      sample_rate: this.opts.sampleRate,
    };
    // The current speech API has no speed control (temperature/top_p steer delivery), so speed is not sent.
    if (req.language) body.language = req.language.slice(0, 2);
    const res = await vendorAudio(this.provider, `${this.opts.baseUrl}/v1/ai/speech/bytes`, {
      method: 'POST',
      // Synthesis only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: req.signal,
    });
    return { sampleRate: this.opts.sampleRate, chunks: pcmStream(this.provider, res.body) };
  }
}
