import {
  TtsEngine,
  type SpokenVoice,
  type TtsAudio,
  type TtsCapabilities,
  type TtsRequest,
  type Voice,
} from '../types.ts';
import { pcmStream } from '../../core/vendor-audio.ts';
import { adapterOptions, clamp, escapeXml, requireKey } from '../../core/vendor-options.ts';
import { vendorAudio } from '../../core/vendor-client.ts';
import { stockVoices, type StockVoice } from './stock-voices.ts';

export interface AzureTtsOptions {
  /**
   * Env AZURE_BASE_URL, e.g. https://westeurope.tts.speech.microsoft.com. Unset: the region comes from a key
   * written `<region>:<key>`, else `region`.
   */
  baseUrl?: string;
  region?: string;
  voice?: string;
}

const DEFAULTS = { region: 'eastus', voice: 'en-US-JennyNeural' } as const;

/** Raw PCM output: no container to strip, streamable. */
const OUTPUT_FORMAT = 'raw-24khz-16bit-mono-pcm';
const PCM_RATE = 24000;

const VOICES: StockVoice[] = [
  ['en-US-JennyNeural', 'Jenny', 'en-US', 'female'],
  ['en-US-AriaNeural', 'Aria', 'en-US', 'female'],
  ['en-US-AvaMultilingualNeural', 'Ava (multilingual)', 'en-US', 'female'],
  ['en-US-GuyNeural', 'Guy', 'en-US', 'male'],
  ['en-US-AndrewMultilingualNeural', 'Andrew (multilingual)', 'en-US', 'male'],
  ['en-GB-SoniaNeural', 'Sonia', 'en-GB', 'female'],
  ['en-GB-RyanNeural', 'Ryan', 'en-GB', 'male'],
  ['de-DE-KatjaNeural', 'Katja', 'de-DE', 'female'],
  ['fr-FR-DeniseNeural', 'Denise', 'fr-FR', 'female'],
  ['es-ES-ElviraNeural', 'Elvira', 'es-ES', 'female'],
];

/**
 * Azure AI Speech: `POST /cognitiveservices/v1` with `Ocp-Apim-Subscription-Key`, an SSML body (voice, prosody
 * rate and pitch) and `X-Microsoft-OutputFormat: raw-24khz-16bit-mono-pcm`; the PCM body streams.
 */
export class AzureTts extends TtsEngine {
  readonly provider = 'azure';
  readonly label = 'azure.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: true, requiresKey: true };
  private readonly opts: { baseUrl?: string; region: string; voice: string };

  constructor(opts: AzureTtsOptions = {}) {
    super();
    this.opts = adapterOptions(this.label, DEFAULTS, opts);
    if (!/^[a-z0-9]+$/.test(this.opts.region)) throw new Error(`${this.label}: bad region "${this.opts.region}"`);
  }

  async voices(): Promise<Voice[]> {
    return stockVoices(this.provider, VOICES);
  }

  /** A stock voice of the language, else Ava Multilingual, which speaks the language of the text it is given. */
  override async multilingualVoice(language: string): Promise<SpokenVoice> {
    const stock = await super.multilingualVoice(language);
    return stock.voiceId === 'default' ? { voiceId: 'en-US-AvaMultilingualNeural' } : stock;
  }

  /** `<region>:<key>` selects the region per key; a bare key uses the configured base URL or region. */
  private endpoint(apiKey: string): { url: string; key: string } {
    const m = /^([a-z0-9]+):(.+)$/.exec(apiKey);
    const key = m ? m[2]! : apiKey;
    const base = this.opts.baseUrl ?? `https://${m ? m[1] : this.opts.region}.tts.speech.microsoft.com`;
    return { url: `${base}/cognitiveservices/v1`, key };
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    const { url, key } = this.endpoint(requireKey(this.provider, this.label, req.apiKey));
    const voice = req.voiceId && req.voiceId !== 'default' ? req.voiceId : this.opts.voice;
    const res = await vendorAudio(this.provider, url, {
      method: 'POST',
      // Synthesis only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: {
        'ocp-apim-subscription-key': key,
        'content-type': 'application/ssml+xml',
        'x-microsoft-outputformat': OUTPUT_FORMAT,
        'user-agent': 'voice-agent-platform',
      },
      body: azureSsml(req.text, voice, req.speed, req.pitch, req.language),
      signal: req.signal,
    });
    return { sampleRate: PCM_RATE, chunks: pcmStream(this.provider, res.body) };
  }
}

/** SSML for one voice; rate and pitch as relative percentages (1.25 → +25%). */
export function azureSsml(text: string, voice: string, speed: number, pitch: number, language?: string): string {
  const lang = /^[a-z]{2,3}-[A-Z]{2}/.exec(voice)?.[0] ?? language ?? 'en-US';
  const pct = (v: number) => {
    const p = Math.round((v - 1) * 100);
    return `${p >= 0 ? '+' : ''}${p}%`;
  };
  const inner = escapeXml(text);
  const prosody =
    speed !== 1 || pitch !== 1
      ? `<prosody rate="${pct(clamp(speed, 0.5, 2))}" pitch="${pct(clamp(pitch, 0.5, 1.5))}">${inner}</prosody>`
      : inner;
  return (
    `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="${escapeXml(lang)}">` +
    `<voice name="${escapeXml(voice)}">${prosody}</voice></speak>`
  );
}
