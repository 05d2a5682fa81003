import {
  primaryLanguage,
  TtsEngine,
  type SpokenVoice,
  type TtsAudio,
  type TtsCapabilities,
  type TtsRequest,
  type Voice,
} from '../types.ts';
import { pcmStream } from '../../core/vendor-audio.ts';
import { adapterOptions, checkSampleRate, clamp, requireKey, vendorModel } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface ElevenLabsTtsOptions {
  /** Default https://api.elevenlabs.io (env ELEVENLABS_BASE_URL). */
  baseUrl?: string;
  model?: string;
  /** Used when the request's voiceId is `default`. */
  voice?: string;
  sampleRate?: 16000 | 22050 | 24000 | 44100;
}

const DEFAULTS = {
  baseUrl: 'https://api.elevenlabs.io',
  model: 'eleven_flash_v2_5',
  voice: '21m00Tcm4TlvDq8ikWAM',
  sampleRate: 24000,
} as const;

const MULTILINGUAL = 'eleven_multilingual_v2';

const VOICES: StockVoice[] = [
  ['21m00Tcm4TlvDq8ikWAM', 'Rachel', 'en', 'female'],
  ['EXAVITQu4vr4xnSDxMaL', 'Sarah', 'en', 'female'],
  ['MF3mGyEYCl7XYWbV9V6O', 'Elli', 'en', 'female'],
  ['AZnzlk1XvdvUeBnXmlld', 'Domi', 'en', 'female'],
  ['pNInz6obpgDQGcFmaJgB', 'Adam', 'en', 'male'],
  ['ErXwobaYiN019PkySvjV', 'Antoni', 'en', 'male'],
  ['TxGEqnHWrfWFTfGW9XjX', 'Josh', 'en', 'male'],
  ['VR6AewLTigWG4xSOukaG', 'Arnold', 'en', 'male'],
  ['yoZ06aMxZJJ28mfd3POQ', 'Sam', 'en', 'male'],
];

/**
 * ElevenLabs streaming text-to-speech: `POST /v1/text-to-speech/{voice}/stream?output_format=pcm_<rate>` with
 * `xi-api-key`; the body streams raw PCM s16le as it is generated.
 */
export class ElevenLabsTts extends TtsEngine {
  readonly provider = 'elevenlabs';
  readonly label = 'elevenlabs.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: false, requiresKey: true };
  private readonly opts: Required<ElevenLabsTtsOptions>;

  constructor(opts: ElevenLabsTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    checkSampleRate(this.label, this.opts.sampleRate, [16000, 22050, 24000, 44100]);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  /**
   * Every ElevenLabs voice speaks every language of its multilingual models; the stock voices are English ones, so
   * another language gets the default voice on eleven_multilingual_v2 (29 languages; quality over flash's latency).
   */
  override async multilingualVoice(language: string): Promise<SpokenVoice> {
    return primaryLanguage(language) === 'en' ? { voiceId: 'default' } : { voiceId: 'default', model: MULTILINGUAL };
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const voice = req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice;
    const url =
      `${this.opts.baseUrl}/v1/text-to-speech/${encodeURIComponent(voice)}/stream` +
      `?output_format=pcm_${this.opts.sampleRate}`;
    const body: Record<string, unknown> = { text: req.text, model_id: vendorModel(req.model, this.opts.model) };
    if (req.language) body.language_code = req.language.slice(0, 2);
    // ElevenLabs accepts 0.7-1.2; outside that the request fails, so the rate is clamped.
    if (req.speed !== 1) body.voice_settings = { speed: clamp(req.speed, 0.7, 1.2) };
    const res = await vendorAudio(this.provider, url, {
      method: 'POST',
      // Synthesis only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { 'xi-api-key': key, 'content-type': 'application/json', accept: 'audio/pcm' },
      body: JSON.stringify(body),
      signal: req.signal,
    });
    return { sampleRate: this.opts.sampleRate, chunks: pcmStream(this.provider, res.body) };
  }
}
