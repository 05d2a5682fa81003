import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { EngineError } from '../../../kernel/errors/engine-error.ts';
import { once, wavToPcm } from '../../core/vendor-audio.ts';
import { adapterOptions, checkSampleRate, clamp, requireKey } from '../../core/vendor-options.ts';
import { vendorJson } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface GoogleTtsOptions {
  /** Default https://texttospeech.googleapis.com (env GOOGLE_BASE_URL). */
  baseUrl?: string;
  voice?: string;
  sampleRate?: 8000 | 16000 | 22050 | 24000 | 44100 | 48000;
}

const DEFAULTS = {
  baseUrl: 'https://texttospeech.googleapis.com',
  voice: 'en-US-Neural2-F',
  sampleRate: 24000,
} as const;

const VOICES: StockVoice[] = [
  ['en-US-Neural2-F', 'Neural2 F', 'en-US', 'female'],
  ['en-US-Neural2-C', 'Neural2 C', 'en-US', 'female'],
  ['en-US-Neural2-D', 'Neural2 D', 'en-US', 'male'],
  ['en-US-Neural2-J', 'Neural2 J', 'en-US', 'male'],
  ['en-US-Wavenet-F', 'WaveNet F', 'en-US', 'female'],
  ['en-US-Standard-B', 'Standard B', 'en-US', 'male'],
  ['en-GB-Neural2-A', 'Neural2 A', 'en-GB', 'female'],
  ['de-DE-Neural2-B', 'Neural2 B', 'de-DE', 'male'],
  ['fr-FR-Neural2-A', 'Neural2 A', 'fr-FR', 'female'],
  ['es-ES-Neural2-A', 'Neural2 A', 'es-ES', 'female'],
];

interface SynthesizeResponse {
  audioContent?: string;
}

/**
 * Google Cloud Text-to-Speech: `POST /v1/text:synthesize?key=<key>` with LINEAR16 at the configured rate; the
 * answer is JSON with base64 `audioContent` (a WAV), so nothing streams before the whole clip is made.
 */
export class GoogleTts extends TtsEngine {
  readonly provider = 'google';
  readonly label = 'google.tts';
  readonly capabilities: TtsCapabilities = { streaming: false, pitch: true, requiresKey: true };
  private readonly opts: Required<GoogleTtsOptions>;

  constructor(opts: GoogleTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    checkSampleRate(this.label, this.opts.sampleRate, [8000, 16000, 22050, 24000, 44100, 48000]);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const voice = req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice;
    const languageCode = /^[a-z]{2,3}-[A-Z]{2}/.exec(voice)?.[0] ?? req.language ?? 'en-US';
    const audioConfig: Record<string, unknown> = { audioEncoding: 'LINEAR16', sampleRateHertz: this.opts.sampleRate };
    if (req.speed !== 1) audioConfig.speakingRate = clamp(req.speed, 0.25, 4);
    // Pitch is in semitones (-20..20): a frequency ratio r is 12·log2(r) semitones.
    if (req.pitch !== 1) audioConfig.pitch = Number(clamp(12 * Math.log2(req.pitch), -20, 20).toFixed(2));
    const out = await vendorJson<SynthesizeResponse>(
      this.provider,
      `${this.opts.baseUrl}/v1/text:synthesize?key=${encodeURIComponent(key)}`,
      {
        method: 'POST',
        // Synthesis only computes an answer: a failed attempt may be sent again.
        idempotent: true,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: { text: req.text }, voice: { languageCode, name: voice }, audioConfig }),
        signal: req.signal,
      },
    );
    if (typeof out.audioContent !== 'string') {
      throw new EngineError(this.provider, 'upstream', 'google answered without audioContent', true);
    }
    const audio = Buffer.from(out.audioContent, 'base64');
    // LINEAR16 comes with a WAV header; take a headerless answer as the raw samples it then is.
    if (audio.toString('ascii', 0, 4) !== 'RIFF') {
      return { sampleRate: this.opts.sampleRate, chunks: once(audio.subarray(0, audio.length - (audio.length % 2))) };
    }
    return wavToPcm(this.provider, once(audio), this.opts.sampleRate, req.signal);
  }
}
