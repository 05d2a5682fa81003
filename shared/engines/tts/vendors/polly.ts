import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from '../types.ts';
import { EngineError } from '../../../kernel/errors/engine-error.ts';
import { pcmStream } from '../../core/vendor-audio.ts';
import { adapterOptions, clamp, escapeXml, requireKey } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { signV4, type AwsCredentials } from './sigv4.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface PollyTtsOptions {
  /** Env POLLY_BASE_URL; default https://polly.<region>.amazonaws.com. */
  baseUrl?: string;
  /** Signing region when the key does not name one (default us-east-1). */
  region?: string;
  voice?: string;
  engine?: 'standard' | 'neural' | 'generative' | 'long-form';
  sampleRate?: 8000 | 16000;
}

const DEFAULTS = { region: 'us-east-1', voice: 'Joanna', engine: 'neural', sampleRate: 16000 } as const;

const VOICES: StockVoice[] = [
  ['Joanna', 'Joanna', 'en-US', 'female'],
  ['Ruth', 'Ruth', 'en-US', 'female'],
  ['Kendra', 'Kendra', 'en-US', 'female'],
  ['Matthew', 'Matthew', 'en-US', 'male'],
  ['Stephen', 'Stephen', 'en-US', 'male'],
  ['Amy', 'Amy', 'en-GB', 'female'],
  ['Brian', 'Brian', 'en-GB', 'male'],
  ['Vicki', 'Vicki', 'de-DE', 'female'],
  ['Lea', 'Léa', 'fr-FR', 'female'],
  ['Lucia', 'Lucia', 'es-ES', 'female'],
];

/**
 * Parses a Polly key: `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:REGION[:SESSION_TOKEN]]` (one string, so it fits the
 * platform's one-key-per-vendor storage).
 */
export function parsePollyKey(key: string): { credentials: AwsCredentials; region?: string } | null {
  const [accessKeyId, secretAccessKey, region, sessionToken] = key.split(':');
  if (!accessKeyId || !secretAccessKey) return null;
  return {
    credentials: { accessKeyId, secretAccessKey, sessionToken: sessionToken || undefined },
    region: region || undefined,
  };
}

/**
 * Amazon Polly `SynthesizeSpeech`: `POST /v1/speech`, signed with SigV4 (service `polly`), `OutputFormat: pcm`
 * (s16le mono at 8 or 16 kHz); the body streams. Speed is SSML prosody rate; neural voices take no pitch.
 */
export class PollyTts extends TtsEngine {
  readonly provider = 'polly';
  readonly label = 'polly.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: false, requiresKey: true };
  private readonly opts: { baseUrl?: string; region: string; voice: string; engine: string; sampleRate: number };

  constructor(opts: PollyTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    if (![8000, 16000].includes(this.opts.sampleRate)) {
      throw new Error(`${this.label}: pcm output is 8000 or 16000 Hz, not ${this.opts.sampleRate}`);
    }
    if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(this.opts.region)) throw new Error(`${this.label}: bad region`);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const parsed = parsePollyKey(requireKey(this.provider, this.label, req.apiKey));
    if (!parsed) {
      throw new EngineError(this.provider, 'auth', 'polly key must be ACCESS_KEY_ID:SECRET_ACCESS_KEY[:REGION]', false);
    }
    const region = parsed.region ?? this.regionOfBaseUrl() ?? this.opts.region;
    const url = `${this.opts.baseUrl ?? `https://polly.${region}.amazonaws.com`}/v1/speech`;
    const ssml = req.speed !== 1;
    const body = JSON.stringify({
      Engine: this.opts.engine,
      OutputFormat: 'pcm',
      SampleRate: String(this.opts.sampleRate),
      Text: ssml
        ? `<speak><prosody rate="${Math.round(clamp(req.speed, 0.2, 2) * 100)}%">${escapeXml(req.text)}</prosody></speak>`
        : req.text,
      TextType: ssml ? 'ssml' : 'text',
      VoiceId: req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice,
    });
    const headers = await signV4({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      body,
      region,
      service: 'polly',
      credentials: parsed.credentials,
    });
    // fetch sets Host itself (to the same url.host that was signed).
    const { host: _host, ...send } = headers;
    const res = await vendorAudio(this.provider, url, {
      method: 'POST',
      idempotent: true,
      headers: send,
      body,
      signal: req.signal,
    });
    return { sampleRate: this.opts.sampleRate, chunks: pcmStream(this.provider, res.body) };
  }

  private regionOfBaseUrl(): string | undefined {
    return this.opts.baseUrl ? /polly[.-]([a-z0-9-]+)\.amazonaws\.com/.exec(this.opts.baseUrl)?.[1] : undefined;
  }
}
