import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { pcmStream } from '../../core/vendor-audio.ts';
import { adapterOptions, clamp, requireKey } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface OpenAiTtsOptions {
  /** Default https://api.openai.com/v1 (env OPENAI_BASE_URL; any OpenAI-compatible speech server works). */
  baseUrl?: string;
  model?: string;
  voice?: string;
}

const DEFAULTS = { baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini-tts', voice: 'alloy' } as const;

/** The API answers `response_format: pcm` as raw 24 kHz s16le mono. */
const PCM_RATE = 24000;

const VOICES: StockVoice[] = [
  ['alloy', 'Alloy', 'en', 'neutral'],
  ['ash', 'Ash', 'en', 'male'],
  ['ballad', 'Ballad', 'en', 'male'],
  ['coral', 'Coral', 'en', 'female'],
  ['echo', 'Echo', 'en', 'male'],
  ['fable', 'Fable', 'en', 'neutral'],
  ['onyx', 'Onyx', 'en', 'male'],
  ['nova', 'Nova', 'en', 'female'],
  ['sage', 'Sage', 'en', 'female'],
  ['shimmer', 'Shimmer', 'en', 'female'],
  ['verse', 'Verse', 'en', 'male'],
  ['marin', 'Marin', 'en', 'female'],
  ['cedar', 'Cedar', 'en', 'male'],
];

/** OpenAI speech: `POST /audio/speech` (Bearer) with `response_format: pcm`; the PCM body streams. */
export class OpenAiTts extends TtsEngine {
  readonly provider = 'openai';
  readonly label = 'openai.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: false, requiresKey: true };
  private readonly opts: Required<OpenAiTtsOptions>;

  constructor(opts: OpenAiTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const body: Record<string, unknown> = {
      model: req.model || this.opts.model,
      input: req.text,
      voice: req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice,
      response_format: 'pcm',
    };
    if (req.speed !== 1) body.speed = clamp(req.speed, 0.25, 4);
    const res = await vendorAudio(this.provider, `${this.opts.baseUrl}/audio/speech`, {
      method: 'POST',
      // Synthesis only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: req.signal,
    });
    return { sampleRate: PCM_RATE, chunks: pcmStream(this.provider, res.body) };
  }
}
