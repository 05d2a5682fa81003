import { EngineError } from '../../core/engine-error.ts';
import { pcmToWav } from '../../tts/vendors/audio.ts';
import { delay, normalizeBaseUrl, requireKey, stripUndefined, vendorJson } from '../../tts/vendors/http.ts';
import { SttEngine, type SttCapabilities, type SttRequest, type TranscriptionResult } from '../types.ts';
import { languageCode, pcmSeconds, plainWords, segmentsFromWords, speakerLabel, type SpeakerWord } from './words.ts';

export interface AssemblyAiSttOptions {
  /** Default https://api.assemblyai.com (env ASSEMBLYAI_BASE_URL). */
  baseUrl?: string;
  /** `speech_model` per mode. */
  accurateModel?: string;
  fastModel?: string;
  pollMs?: number;
  timeoutMs?: number;
}

const DEFAULTS = {
  baseUrl: 'https://api.assemblyai.com',
  accurateModel: 'best',
  fastModel: 'nano',
  pollMs: 1000,
  timeoutMs: 600_000,
};

interface AaiWord {
  text: string;
  start: number;
  end: number;
  speaker?: string | null;
}
interface AaiTranscript {
  id: string;
  status: 'queued' | 'processing' | 'completed' | 'error';
  error?: string;
  text?: string | null;
  language_code?: string | null;
  audio_duration?: number | null;
  words?: AaiWord[] | null;
  utterances?: { speaker: string; start: number; end: number; text: string }[] | null;
}

/**
 * AssemblyAI v2 (asynchronous): upload the audio (`POST /v2/upload`), create a transcript
 * (`POST /v2/transcript`), poll `GET /v2/transcript/{id}` until `completed` or `error`. The key goes bare in
 * `authorization`; times arrive in milliseconds.
 */
export class AssemblyAiStt extends SttEngine {
  readonly provider = 'assemblyai';
  readonly label = 'assemblyai.stt';
  readonly capabilities: SttCapabilities = {
    streaming: false,
    diarization: true,
    wordTimestamps: true,
    sampleRates: [8000, 16000, 22050, 24000, 44100, 48000],
    languages: ['*'],
    requiresKey: true,
  };
  private readonly opts: typeof DEFAULTS;

  constructor(opts: AssemblyAiSttOptions = {}) {
    super();
    this.opts = { ...DEFAULTS, ...stripUndefined(opts) };
    this.opts.baseUrl = normalizeBaseUrl(this.label, this.opts.baseUrl);
    if (this.opts.pollMs < 50 || this.opts.timeoutMs < this.opts.pollMs) throw new Error(`${this.label}: bad timing`);
  }

  protected async _transcribe(req: SttRequest): Promise<TranscriptionResult> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const deadline = AbortSignal.timeout(this.opts.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    const auth = { authorization: key };
    const upload = await vendorJson<{ upload_url: string }>(this.provider, `${this.opts.baseUrl}/v2/upload`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: pcmToWav(req.pcm, req.sampleRate),
      signal,
    });
    const body: Record<string, unknown> = {
      audio_url: upload.upload_url,
      speech_model: req.mode === 'fast' ? this.opts.fastModel : this.opts.accurateModel,
      speaker_labels: req.diarize,
      punctuate: true,
      format_text: true,
    };
    if (req.language) body.language_code = req.language;
    else body.language_detection = true;
    if (req.prompt)
      body.word_boost = req.prompt
        .split(/[\s,]+/)
        .filter(Boolean)
        .slice(0, 100);
    let t = await vendorJson<AaiTranscript>(this.provider, `${this.opts.baseUrl}/v2/transcript`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    while (t.status === 'queued' || t.status === 'processing') {
      await delay(this.opts.pollMs, signal);
      t = await vendorJson<AaiTranscript>(
        this.provider,
        `${this.opts.baseUrl}/v2/transcript/${encodeURIComponent(t.id)}`,
        { headers: auth, signal },
      );
    }
    if (t.status !== 'completed') {
      // AssemblyAI reports undecodable or empty audio this way: the same input would fail again.
      throw new EngineError(
        this.provider,
        'bad_request',
        `assemblyai transcript failed: ${String(t.error).slice(0, 300)}`,
        false,
      );
    }
    const words: SpeakerWord[] = (t.words ?? []).map((w) => ({
      word: w.text,
      start: w.start / 1000,
      end: w.end / 1000,
      speaker: req.diarize ? speakerLabel(w.speaker) : undefined,
    }));
    const segments = t.utterances?.length
      ? t.utterances.map((u) => ({
          start: u.start / 1000,
          end: u.end / 1000,
          text: u.text,
          ...(req.diarize ? { speaker: speakerLabel(u.speaker) } : {}),
        }))
      : segmentsFromWords(words);
    const result: TranscriptionResult = {
      text: t.text ?? '',
      segments,
      language: languageCode(t.language_code, req.language),
      duration: pcmSeconds(req.pcm, req.sampleRate),
    };
    if (req.timestamps === 'word') result.words = plainWords(words);
    return result;
  }
}
