import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { EngineError } from '../../../kernel/errors/engine-error.ts';
import { bytesOf, wavToPcm } from '../../core/vendor-audio.ts';
import { adapterOptions, checkSampleRate, clamp, requireKey, vendorModel } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface PlayHtTtsOptions {
  /** Default https://api.play.ht (env PLAYHT_BASE_URL). */
  baseUrl?: string;
  /** `voice_engine`. */
  model?: string;
  voice?: string;
  sampleRate?: 8000 | 16000 | 24000 | 44100 | 48000;
}

const DEFAULTS = {
  baseUrl: 'https://api.play.ht',
  model: 'Play3.0-mini',
  voice: 's3://voice-cloning-zero-shot/d9ff78ba-d016-47f6-b0ef-dd630f59414e/female-cs/manifest.json',
  sampleRate: 24000,
} as const;

const VOICES: StockVoice[] = [
  [
    's3://voice-cloning-zero-shot/d9ff78ba-d016-47f6-b0ef-dd630f59414e/female-cs/manifest.json',
    'Jennifer',
    'en',
    'female',
  ],
];

/**
 * PlayHT: `POST /api/v2/tts/stream` with `AUTHORIZATION: <secret>` and `X-USER-ID: <user>`, so the platform key
 * is written `<userId>:<secret>`. Output is streamed WAV; the header is read and the PCM passed on as it comes.
 */
export class PlayHtTts extends TtsEngine {
  readonly provider = 'playht';
  readonly label = 'playht.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: false, requiresKey: true };
  private readonly opts: Required<PlayHtTtsOptions>;

  constructor(opts: PlayHtTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    checkSampleRate(this.label, this.opts.sampleRate, [8000, 16000, 24000, 44100, 48000]);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const sep = key.indexOf(':');
    if (sep <= 0 || sep === key.length - 1) {
      throw new EngineError(this.provider, 'auth', 'playht key must be written <userId>:<secret>', false);
    }
    const body: Record<string, unknown> = {
      text: req.text,
      voice: req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice,
      voice_engine: vendorModel(req.model, this.opts.model),
      output_format: 'wav',
      sample_rate: this.opts.sampleRate,
      speed: clamp(req.speed, 0.1, 5),
    };
    if (req.language) body.language = req.language;
    const res = await vendorAudio(this.provider, `${this.opts.baseUrl}/api/v2/tts/stream`, {
      method: 'POST',
      // Synthesis only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: {
        authorization: key.slice(sep + 1),
        'x-user-id': key.slice(0, sep),
        accept: 'audio/wav',
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
      signal: req.signal,
    });
    return wavToPcm(this.provider, bytesOf(this.provider, res.body), this.opts.sampleRate, req.signal);
  }
}
