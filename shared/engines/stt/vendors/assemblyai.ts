import { EngineError } from '../../../kernel/errors/engine-error.ts';
import { pcmToWav } from '../../core/vendor-audio.ts';
import { normalizeBaseUrl, requireKey } from '../../core/vendor-options.ts';
import { vendorJson } from '../../core/vendor-client.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { type SttRequest, type SttStream, type SttStreamOptions, type TranscriptionResult } from '../types.ts';
import { HostedSttEngine } from './hosted.ts';
import { LiveSocketStream } from './live-socket.ts';
import { speakerLabel, vendorTranscription, type SpeakerWord } from './words.ts';

export interface AssemblyAiSttOptions {
  /** Default https://api.assemblyai.com (env ASSEMBLYAI_BASE_URL). */
  baseUrl?: string;
  /** `speech_model` per mode. */
  accurateModel?: string;
  fastModel?: string;
  pollMs?: number;
  timeoutMs?: number;
  /**
   * Universal-Streaming host. Default wss://streaming.assemblyai.com, or the base URL's host over ws(s) when a
   * base URL is configured (a self-hosted gateway or a test double serves both).
   */
  streamingUrl?: string;
}

/** Live options: the interface's, plus the wire encoding (8 kHz phone μ-law can go through untouched). */
export interface AssemblyAiStreamOptions extends SttStreamOptions {
  encoding?: 'pcm_s16le' | 'pcm_mulaw';
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
export class AssemblyAiStt extends HostedSttEngine<typeof DEFAULTS> {
  private readonly streamingUrl: string;

  constructor(opts: AssemblyAiSttOptions = {}) {
    super('assemblyai', DEFAULTS, opts, [8000, 16000, 22050, 24000, 44100, 48000]);
    this.streamingUrl = normalizeBaseUrl(
      this.label,
      opts.streamingUrl ?? (opts.baseUrl ? this.opts.baseUrl.replace(/^http/, 'ws') : 'wss://streaming.assemblyai.com'),
    );
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
      await sleep(this.opts.pollMs, undefined, { signal });
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
    return vendorTranscription(req, {
      text: t.text ?? '',
      words,
      segments: t.utterances?.map((u) => ({
        start: u.start / 1000,
        end: u.end / 1000,
        text: u.text,
        ...(req.diarize ? { speaker: speakerLabel(u.speaker) } : {}),
      })),
      language: t.language_code,
    });
  }

  /**
   * Universal-Streaming v3 (`/v3/ws`, key in `authorization`): `Turn` messages carry the words heard so far
   * (partials) and, with `format_turns`, a formatted `end_of_turn` message that becomes the final; `Terminate`
   * flushes and closes. Audio goes out in messages of at least 50 ms (the API's lower bound). Auth and policy
   * closes (1008, 3xxx) are permanent; others retryable.
   */
  protected override _stream(opts: SttStreamOptions): SttStream {
    const o = opts as AssemblyAiStreamOptions;
    const key = requireKey(this.provider, this.label, o.apiKey);
    const q = new URLSearchParams({
      sample_rate: String(o.sampleRate),
      encoding: o.encoding ?? 'pcm_s16le',
      format_turns: 'true',
    });
    if (o.language && !o.language.startsWith('en')) q.set('speech_model', 'universal-streaming-multilingual');
    // Universal-Streaming refuses audio messages shorter than 50 ms (close 3007), and phone frames are 20 ms.
    const minBytes = Math.ceil(o.sampleRate * 0.05) * (o.encoding === 'pcm_mulaw' ? 1 : 2);
    let held: Buffer[] = [];
    let heldBytes = 0;
    return new LiveSocketStream(
      {
        provider: this.provider,
        url: `${this.streamingUrl}/v3/ws?${q}`,
        headers: { authorization: key },
        encodeAudio(audio) {
          held.push(audio);
          heldBytes += audio.length;
          if (heldBytes < minBytes) return [];
          const out = Buffer.concat(held);
          held = [];
          heldBytes = 0;
          return [out];
        },
        onEnd(ctl) {
          // The last piece is padded with silence up to the 50 ms minimum (μ-law silence is 0xFF).
          if (heldBytes) {
            const pad = Buffer.alloc(Math.max(0, minBytes - heldBytes), o.encoding === 'pcm_mulaw' ? 0xff : 0);
            ctl.send(Buffer.concat([...held, pad]));
          }
          held = [];
          heldBytes = 0;
          ctl.send(JSON.stringify({ type: 'Terminate' }));
        },
        onText(frame, emit) {
          const m = JSON.parse(frame) as AaiTurn;
          if (m.type !== 'Turn') return; // Begin, SpeechStarted, Termination
          const words = m.words ?? [];
          if (!m.end_of_turn) {
            const heard = words
              .map((w) => w.text)
              .join(' ')
              .trim();
            if (heard) emit({ type: 'partial', text: heard });
            return;
          }
          if (!m.turn_is_formatted) return; // the formatted copy of this turn follows
          const text = (m.transcript ?? '').trim();
          if (!text) return;
          emit({
            type: 'final',
            text,
            start: (words[0]?.start ?? 0) / 1000,
            end: (words.at(-1)?.end ?? 0) / 1000,
            words: words.map((w) => ({ word: w.text, start: w.start / 1000, end: w.end / 1000 })),
          });
        },
        closeError: (code, reason) => {
          const permanent = code === 1008 || (code >= 3000 && code < 4000);
          const kind = permanent ? (/auth|key|token/i.test(reason) ? 'auth' : 'bad_request') : 'upstream';
          return new EngineError('assemblyai', kind, `assemblyai: ${reason || `socket closed (${code})`}`, !permanent);
        },
      },
      o.signal,
    );
  }
}

interface AaiTurn {
  type?: string;
  end_of_turn?: boolean;
  turn_is_formatted?: boolean;
  transcript?: string;
  words?: { text: string; start: number; end: number; word_is_final?: boolean }[];
}
