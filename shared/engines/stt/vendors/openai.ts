import { pcmToWav } from '../../core/vendor-audio.ts';
import { normalizeBaseUrl, requireKey, STT_HEADERS_TIMEOUT_MS, stripUndefined } from '../../core/vendor-options.ts';
import { vendorJson } from '../../core/vendor-client.ts';
import {
  SttEngine,
  type SttCapabilities,
  type SttRequest,
  type SttStream,
  type SttStreamOptions,
  type TranscriptionResult,
} from '../types.ts';
import { openAiRealtimeStream } from './openai-realtime.ts';
import { languageCode, pcmSeconds } from './words.ts';

export interface OpenAiCompatibleSttOptions {
  baseUrl?: string;
  accurateModel?: string;
  fastModel?: string;
}

export interface OpenAiSttOptions extends OpenAiCompatibleSttOptions {
  /** Model of live (Realtime API) transcription sessions. */
  realtimeModel?: string;
}

interface VerboseJson {
  text?: string;
  language?: string;
  duration?: number;
  segments?: { start: number; end: number; text: string }[];
  words?: { word: string; start: number; end: number }[];
}

const CAPABILITIES: SttCapabilities = {
  streaming: false,
  diarization: false,
  wordTimestamps: true,
  sampleRates: [8000, 16000, 22050, 24000, 44100, 48000],
  languages: ['*'],
  requiresKey: true,
};

/**
 * The OpenAI transcription API (`POST {base}/audio/transcriptions`, multipart, Bearer) with
 * `response_format=verbose_json` and `timestamp_granularities[]`; Groq serves the same API. No diarization.
 * Exported as the template of any other server of this API: a new one is a subclass naming its defaults.
 */
export abstract class OpenAiCompatibleStt extends SttEngine {
  readonly capabilities: SttCapabilities = CAPABILITIES;
  protected readonly opts: Required<OpenAiCompatibleSttOptions>;

  constructor(defaults: Required<OpenAiCompatibleSttOptions>, opts: OpenAiCompatibleSttOptions, label: string) {
    super();
    this.opts = { ...defaults, ...stripUndefined(opts) };
    this.opts.baseUrl = normalizeBaseUrl(label, this.opts.baseUrl);
  }

  protected async _transcribe(req: SttRequest): Promise<TranscriptionResult> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const form = new FormData();
    form.append('file', new Blob([pcmToWav(req.pcm, req.sampleRate)], { type: 'audio/wav' }), 'audio.wav');
    form.append('model', req.mode === 'fast' ? this.opts.fastModel : this.opts.accurateModel);
    form.append('response_format', 'verbose_json');
    form.append('timestamp_granularities[]', 'segment');
    if (req.timestamps === 'word') form.append('timestamp_granularities[]', 'word');
    if (req.language) form.append('language', req.language);
    if (req.prompt) form.append('prompt', req.prompt);
    const out = await vendorJson<VerboseJson>(this.provider, `${this.opts.baseUrl}/audio/transcriptions`, {
      headersTimeoutMs: STT_HEADERS_TIMEOUT_MS,
      method: 'POST',
      // Transcription only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { authorization: `Bearer ${key}` },
      body: form,
      signal: req.signal,
    });
    const result: TranscriptionResult = {
      text: (out.text ?? '').trim(),
      segments: (out.segments ?? []).map((s) => ({ start: s.start, end: s.end, text: s.text.trim() })),
      language: languageCode(out.language, req.language),
      duration: out.duration ?? pcmSeconds(req.pcm, req.sampleRate),
    };
    if (req.timestamps === 'word') {
      result.words = (out.words ?? []).map((w) => ({ word: w.word.trim(), start: w.start, end: w.end }));
    }
    return result;
  }
}

/** OpenAI Whisper (`whisper-1`; the gpt-4o transcribe models do not return verbose_json timestamps). */
export class OpenAiStt extends OpenAiCompatibleStt {
  readonly provider = 'openai';
  readonly label = 'openai.stt';
  override readonly capabilities: SttCapabilities = { ...CAPABILITIES, streaming: true };
  private readonly realtimeModel: string;
  constructor(opts: OpenAiSttOptions = {}) {
    // Default base https://api.openai.com/v1 (env OPENAI_BASE_URL).
    super(
      { baseUrl: 'https://api.openai.com/v1', accurateModel: 'whisper-1', fastModel: 'whisper-1' },
      opts,
      'openai.stt',
    );
    this.realtimeModel = opts.realtimeModel ?? 'gpt-4o-transcribe';
  }

  /** Live transcription over the Realtime API (see openai-realtime.ts); `encoding: 'mulaw'` passes phone audio. */
  protected override _stream(opts: SttStreamOptions): SttStream {
    const key = requireKey(this.provider, this.label, opts.apiKey);
    return openAiRealtimeStream(this.opts.baseUrl, key, this.realtimeModel, opts);
  }
}

/** Groq's hosted Whisper at `https://api.groq.com/openai/v1` (env GROQ_BASE_URL). */
export class GroqStt extends OpenAiCompatibleStt {
  readonly provider = 'groq';
  readonly label = 'groq.stt';
  constructor(opts: OpenAiCompatibleSttOptions = {}) {
    super(
      {
        baseUrl: 'https://api.groq.com/openai/v1',
        accurateModel: 'whisper-large-v3',
        fastModel: 'whisper-large-v3-turbo',
      },
      opts,
      'groq.stt',
    );
  }
}
