import type { WorkOwner } from '../core/fair-queue.ts';
import { EngineError, isEngineError } from '../../kernel/errors/engine-error.ts';
import { engineLatency } from '../core/metrics.ts';

export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
  /** Present with diarization: "speaker_0", "speaker_1", … */
  speaker?: string;
}
export interface TranscriptWord {
  start: number;
  end: number;
  word: string;
}

/** The contract's Transcription result. Times in seconds. */
export interface TranscriptionResult {
  text: string;
  segments: TranscriptSegment[];
  words?: TranscriptWord[];
  language: string;
  duration: number;
}

export interface SttRequest {
  /** Mono PCM s16le at `sampleRate` (decode any container with shared/kernel/audio first). */
  pcm: Buffer;
  sampleRate: number;
  /** Language code; '' = auto-detect where the engine can. */
  language: string;
  mode: 'accurate' | 'fast';
  timestamps: 'segment' | 'word';
  diarize: boolean;
  prompt?: string;
  /** A language model for this request: absolute paths of a pocketsphinx LM (ARPA text or .lm.bin) and a full pronunciation dictionary, and a label naming it ("biased to agent agt_…"). Absent: the general model. */
  languageModel?: { lm: string; dict: string; label: string };
  apiKey?: string;
  /**
   * Incremental decoding of a long recording may use several decoders at once (a job, nobody waiting on the first
   * words): the local engine then decodes groups of pieces in parallel, each in its own slot.
   */
  parallel?: boolean;
  /** Who the transcript is for; local engines queue by it (live calls first, then fair across developers). */
  owner?: WorkOwner;
  signal?: AbortSignal;
}

/**
 * What an incremental transcription reports: each segment as soon as it is decoded (times from the start of the
 * recording), then the whole result, which is the last event.
 */
export type SttProgress =
  { type: 'segment'; segment: TranscriptSegment } | { type: 'result'; result: TranscriptionResult };

export interface SttStreamOptions {
  sampleRate: number;
  language: string;
  apiKey?: string;
  signal?: AbortSignal;
  /** A language model for this request: absolute paths of a pocketsphinx LM (ARPA text or .lm.bin) and a full pronunciation dictionary, and a label naming it ("biased to agent agt_…"). Absent: the general model. */
  languageModel?: { lm: string; dict: string; label: string };
}

export type SttStreamEvent =
  /**
   * `end`: stream time (s) where the partial's last word ends, when the engine says (Deepgram's word timings): the
   * session takes new words that end after the VAD's last speech as proof that the caller is still talking.
   */
  | { type: 'partial'; text: string; end?: number }
  | { type: 'final'; text: string; start: number; end: number; words?: TranscriptWord[] }
  /**
   * Only from an engine that decodes on this machine (the local recogniser), which can fall behind the audio on a
   * busy CPU: how far through the stream it has decoded (`decoded`, stream seconds) and up to where every final is
   * out (`settled`: no final of audio before it is still to come). A consumer waiting for a final can tell a late
   * one (still decoding toward it) from none (settled past the speech). Vendors never send it.
   */
  | { type: 'progress'; decoded: number; settled: number };

/** A live recognition stream: write PCM frames as they arrive; events yield partial and final results. */
export interface SttStream {
  write(pcm: Buffer): void;
  /** No more audio: flush and emit the last final. */
  end(): void;
  events: AsyncIterable<SttStreamEvent>;
  close(): void;
}

export interface SttCapabilities {
  streaming: boolean;
  diarization: boolean;
  wordTimestamps: boolean;
  /** Sample rates the engine accepts natively (others are resampled by the caller). */
  sampleRates: number[];
  /** Language codes, or ['*'] for many/auto-detect. */
  languages: string[];
  requiresKey: boolean;
}

/** Base of every STT adapter; adapters implement `_transcribe` and, when streaming, `_stream`. */
export abstract class SttEngine {
  abstract readonly provider: string;
  abstract readonly label: string;
  abstract readonly capabilities: SttCapabilities;
  protected abstract _transcribe(req: SttRequest): Promise<TranscriptionResult>;
  /** What served `req`, in words (a local engine says which model it used). */
  describe(_req?: Pick<SttRequest, 'languageModel'>): string {
    return this.label;
  }

  protected _stream(_opts: SttStreamOptions): SttStream {
    throw new EngineError(this.provider, 'bad_request', `${this.label} does not stream`, false);
  }

  async transcribe(req: SttRequest): Promise<TranscriptionResult> {
    const done = engineLatency.startTimer({ capability: 'stt', provider: this.provider });
    try {
      const out = await this._transcribe(req);
      done({ outcome: 'ok' });
      return out;
    } catch (e) {
      done({ outcome: 'error' });
      throw this.wrapError(e);
    }
  }

  /**
   * Transcribes a whole recording like `transcribe`, reporting segments as they are decoded so that a caller can
   * pass them on before the end. Stopping early (or aborting `req.signal`) stops the decoding.
   */
  async *transcribeIncremental(req: SttRequest): AsyncGenerator<SttProgress> {
    const done = engineLatency.startTimer({ capability: 'stt', provider: this.provider });
    let outcome = 'cancelled'; // stays so when the consumer stops before the result
    try {
      for await (const ev of this._transcribeIncremental(req)) {
        if (ev.type === 'result') outcome = 'ok';
        yield ev;
      }
    } catch (e) {
      outcome = 'error';
      throw this.wrapError(e);
    } finally {
      done({ outcome });
    }
  }

  /**
   * Default for engines that decode whole recordings (the vendors' file APIs): everything arrives at once, after
   * decoding. The segments are reported only when they spell the text (joined by spaces), so that what a client
   * concatenates is the text; otherwise (vendor punctuation, paragraphs) the text is one segment.
   */
  protected async *_transcribeIncremental(req: SttRequest): AsyncGenerator<SttProgress> {
    const result = await this._transcribe(req);
    const parts = result.segments.filter((s) => s.text);
    const spelled = parts.map((s) => s.text).join(' ') === result.text;
    const segments = spelled ? parts : result.text ? [{ start: 0, end: result.duration, text: result.text }] : [];
    for (const segment of segments) yield { type: 'segment', segment };
    yield { type: 'result', result };
  }

  stream(opts: SttStreamOptions): SttStream {
    return this._stream(opts);
  }

  private wrapError(e: unknown): unknown {
    // An engine fails only with EngineError: anything else (a socket error, a bug) is reported as the engine's.
    return isEngineError(e) ? e : EngineError.network(this.provider, e);
  }
}
