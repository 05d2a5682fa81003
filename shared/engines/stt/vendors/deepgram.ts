import { pcmToWav } from '../../core/vendor-audio.ts';
import { requireKey, STT_HEADERS_TIMEOUT_MS } from '../../core/vendor-options.ts';
import { vendorJson } from '../../core/vendor-client.ts';
import { type SttRequest, type SttStream, type SttStreamOptions, type TranscriptionResult } from '../types.ts';
import { HostedSttEngine } from './hosted.ts';
import { deepgramLiveStream, type DeepgramStreamOptions } from './deepgram-stream.ts';
import { speakerLabel, vendorTranscription, type SpeakerWord } from './words.ts';

export interface DeepgramSttOptions {
  /** Default https://api.deepgram.com (env DEEPGRAM_BASE_URL); the live socket uses the same host over ws(s). */
  baseUrl?: string;
  model?: string;
  /** Live: silence (ms) that ends an utterance. */
  endpointingMs?: number;
  /** Live: a KeepAlive is sent when no audio went out for this long (Deepgram closes idle sockets at 10 s). */
  keepAliveMs?: number;
}

const DEFAULTS = { baseUrl: 'https://api.deepgram.com', model: 'nova-3', endpointingMs: 300, keepAliveMs: 4000 };

interface DgWord {
  word: string;
  punctuated_word?: string;
  start: number;
  end: number;
  speaker?: number;
}
interface DgListenResponse {
  metadata?: { duration?: number };
  results?: {
    channels?: { detected_language?: string; alternatives?: { transcript?: string; words?: DgWord[] }[] }[];
    utterances?: { start: number; end: number; transcript: string; speaker?: number }[];
  };
}

/**
 * Deepgram speech-to-text. Batch: `POST /v1/listen` with a WAV body (`Authorization: Token`), utterances and
 * optional diarization. Live: the `/v1/listen` WebSocket (see deepgram-stream.ts) with interim results, for
 * 8 kHz phone audio (linear16, or μ-law when the caller passes `encoding: 'mulaw'`).
 */
export class DeepgramStt extends HostedSttEngine<typeof DEFAULTS> {
  constructor(opts: DeepgramSttOptions = {}) {
    super('deepgram', DEFAULTS, opts, [8000, 16000, 24000, 44100, 48000]);
    if (this.opts.endpointingMs < 10 || this.opts.keepAliveMs < 500) throw new Error(`${this.label}: bad timing`);
  }

  protected async _transcribe(req: SttRequest): Promise<TranscriptionResult> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const q = new URLSearchParams({
      model: this.opts.model,
      punctuate: 'true',
      smart_format: 'true',
      utterances: 'true',
    });
    if (req.language) q.set('language', req.language);
    else q.set('detect_language', 'true');
    if (req.diarize) q.set('diarize', 'true');
    const out = await vendorJson<DgListenResponse>(this.provider, `${this.opts.baseUrl}/v1/listen?${q}`, {
      headersTimeoutMs: STT_HEADERS_TIMEOUT_MS,
      method: 'POST',
      // Transcription only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { authorization: `Token ${key}`, 'content-type': 'audio/wav' },
      body: pcmToWav(req.pcm, req.sampleRate),
      signal: req.signal,
    });
    const channel = out.results?.channels?.[0];
    const alt = channel?.alternatives?.[0];
    const words: SpeakerWord[] = (alt?.words ?? []).map((w) => ({
      word: w.punctuated_word ?? w.word,
      start: w.start,
      end: w.end,
      speaker: req.diarize ? speakerLabel(w.speaker) : undefined,
    }));
    return vendorTranscription(req, {
      text: alt?.transcript ?? '',
      words,
      segments: out.results?.utterances?.map((u) => ({
        start: u.start,
        end: u.end,
        text: u.transcript,
        ...(req.diarize && u.speaker !== undefined ? { speaker: speakerLabel(u.speaker) } : {}),
      })),
      language: channel?.detected_language,
      duration: out.metadata?.duration,
    });
  }

  protected override _stream(opts: SttStreamOptions): SttStream {
    const o = opts as DeepgramStreamOptions;
    const key = requireKey(this.provider, this.label, o.apiKey);
    const q = new URLSearchParams({
      model: this.opts.model,
      encoding: o.encoding ?? 'linear16',
      sample_rate: String(o.sampleRate),
      channels: '1',
      interim_results: 'true',
      punctuate: 'true',
      smart_format: 'true',
      endpointing: String(this.opts.endpointingMs),
      language: o.language || 'en',
    });
    const url = `${this.opts.baseUrl.replace(/^http/, 'ws')}/v1/listen?${q}`;
    return deepgramLiveStream(url, key, this.opts.keepAliveMs, o.signal);
  }
}
