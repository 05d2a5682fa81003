import { pcmToWav } from '../../core/vendor-audio.ts';
import { requireKey, STT_HEADERS_TIMEOUT_MS } from '../../core/vendor-options.ts';
import { vendorJson } from '../../core/vendor-client.ts';
import { type SttRequest, type SttStream, type SttStreamOptions, type TranscriptionResult } from '../types.ts';
import { HostedSttEngine } from './hosted.ts';
import { elevenLabsRealtimeStream } from './elevenlabs-realtime.ts';
import { speakerLabel, vendorTranscription, type SpeakerWord } from './words.ts';

export interface ElevenLabsSttOptions {
  /** Default https://api.elevenlabs.io (env ELEVENLABS_BASE_URL). */
  baseUrl?: string;
  model?: string;
  /** Model of live transcription sessions. */
  realtimeModel?: string;
}

const DEFAULTS = { baseUrl: 'https://api.elevenlabs.io', model: 'scribe_v2', realtimeModel: 'scribe_v2_realtime' };

interface ScribeResponse {
  language_code?: string;
  text?: string;
  words?: {
    text: string;
    start: number;
    end: number;
    type?: 'word' | 'spacing' | 'audio_event';
    speaker_id?: string;
  }[];
}

/**
 * ElevenLabs Scribe: `POST /v1/speech-to-text` (multipart, `xi-api-key`) with word timestamps and optional
 * diarization; segments are built from the word list (speaker turns, pauses, sentence ends). Live: Scribe
 * realtime over WebSocket (see elevenlabs-realtime.ts).
 */
export class ElevenLabsStt extends HostedSttEngine<typeof DEFAULTS> {
  constructor(opts: ElevenLabsSttOptions = {}) {
    super('elevenlabs', DEFAULTS, opts, [8000, 16000, 22050, 24000, 44100, 48000]);
  }

  protected async _transcribe(req: SttRequest): Promise<TranscriptionResult> {
    const key = requireKey(this.provider, this.label, req.apiKey);
    const form = new FormData();
    form.append('model_id', this.opts.model);
    form.append('file', new Blob([pcmToWav(req.pcm, req.sampleRate)], { type: 'audio/wav' }), 'audio.wav');
    if (req.language) form.append('language_code', req.language);
    form.append('diarize', String(req.diarize));
    form.append('timestamps_granularity', 'word');
    const out = await vendorJson<ScribeResponse>(this.provider, `${this.opts.baseUrl}/v1/speech-to-text`, {
      headersTimeoutMs: STT_HEADERS_TIMEOUT_MS,
      method: 'POST',
      // Transcription only computes an answer: a failed attempt may be sent again.
      idempotent: true,
      headers: { 'xi-api-key': key },
      body: form,
      signal: req.signal,
    });
    const words: SpeakerWord[] = (out.words ?? [])
      .filter((w) => (w.type ?? 'word') === 'word')
      .map((w) => ({
        word: w.text.trim(),
        start: w.start,
        end: w.end,
        speaker: req.diarize ? speakerLabel(w.speaker_id) : undefined,
      }));
    return vendorTranscription(req, { text: (out.text ?? '').trim(), words, language: out.language_code });
  }

  protected override _stream(opts: SttStreamOptions): SttStream {
    const key = requireKey(this.provider, this.label, opts.apiKey);
    return elevenLabsRealtimeStream(this.opts.baseUrl, key, this.opts.realtimeModel, opts);
  }
}
