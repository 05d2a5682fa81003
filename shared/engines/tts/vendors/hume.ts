import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { pcmStream } from '../../core/vendor-audio.ts';
import { adapterOptions, clamp, requireKey } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface HumeTtsOptions {
  /** Default https://api.hume.ai (env HUME_BASE_URL). */
  baseUrl?: string;
  /** A Voice Library name or a voice id (UUID). */
  voice?: string;
}

const DEFAULTS = { baseUrl: 'https://api.hume.ai', voice: 'Ava Song' } as const;

/** Octave's `pcm` format is s16le mono at 48 kHz. */
const PCM_RATE = 48000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const VOICES: StockVoice[] = [
  ['Ava Song', 'Ava Song', 'en', 'female'],
  ['Kora', 'Kora', 'en', 'female'],
  ['Male English Actor', 'Male English Actor', 'en', 'male'],
  ['Serene Assistant', 'Serene Assistant', 'en', 'female'],
];

/**
 * Hume Octave: `POST /v0/tts/stream/file` (`X-Hume-Api-Key`) with one utterance and `format: {type: pcm}`;
 * audio streams back as it is generated (instant mode).
 */
export class HumeTts extends TtsEngine {
  readonly provider = 'hume';
  readonly label = 'hume.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: false, requiresKey: true };
  private readonly opts: Required<HumeTtsOptions>;

  constructor(opts: HumeTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    if (!this.opts.voice.trim()) throw new Error(`${this.label}: voice must not be empty`);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const voice = req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice;
    const utterance: Record<string, unknown> = {
      text: req.text,
      voice: UUID.test(voice) ? { id: voice } : { name: voice, provider: 'HUME_AI' },
    };
    if (req.speed !== 1) utterance.speed = clamp(req.speed, 0.25, 3);
    const res = await vendorAudio(this.provider, `${this.opts.baseUrl}/v0/tts/stream/file`, {
      method: 'POST',
      // Synthesis only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { 'x-hume-api-key': key, 'content-type': 'application/json' },
      // strip_headers: one continuous stream of samples rather than per-chunk files.
      body: JSON.stringify({
        utterances: [utterance],
        format: { type: 'pcm' },
        instant_mode: true,
        strip_headers: true,
      }),
      signal: req.signal,
    });
    return { sampleRate: PCM_RATE, chunks: pcmStream(this.provider, res.body) };
  }
}
