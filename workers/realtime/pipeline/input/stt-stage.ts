import { NoiseFloor } from '../../../../shared/kernel/audio/noise-floor.ts';
import { pcmToInt16, rms16 } from '../../../../shared/kernel/audio/pcm.ts';
import { Resampler } from '../../../../shared/kernel/audio/resampler.ts';
import type { SttEngine, SttRequest, SttStreamEvent } from '../../../../shared/engines/stt/types.ts';
import { ReconnectingSttStream } from '../../../../shared/engines/stt/reconnecting.ts';
import { FallbackSttStream } from '../../../../shared/engines/stt/fallback.ts';
import type { Logger } from '../../../../shared/kernel/observability/logger.ts';
import type { DataFrame, SystemFrame } from '../frames.ts';
import { Stage } from '../stage.ts';

export interface SttStageOptions {
  /** Caller audio rate (the transport's). */
  inRate: number;
  language: string;
  apiKey?: string;
  /** The local STT's model biased to the agent's words (built off the call path); absent: the general model. */
  languageModel?: SttRequest['languageModel'];
  /** The developer whose call this is: a local engine serves live calls first, then fairly by developer. */
  developerId?: string;
  /**
   * A live STT that takes over when the streaming engine fails mid-call (REALTIME_PHONE_STT_LOCAL_FALLBACK: the
   * local recogniser), with its own stream options; absent: the engine alone, reconnected on drops.
   */
  fallback?: { engine: SttEngine; languageModel?: SttRequest['languageModel'] };
  /** The session clock, for the transcripts' arrival times. */
  now(): number;
  log: Logger;
}

/** Batch engines: the 300 ms of audio before the VAD's onset go with the utterance (speech starts before it says). */
const PREROLL_MS = 300;
/**
 * Batch engines: caller audio kept while no utterance is collected, so the utterance can start at the VAD's onset
 * in audio time. The VAD scores behind real time on a busy machine (its speech-start can come seconds after the
 * audio it describes); a buffer of the last few chunks then held only the words' end, and the STT heard nothing.
 */
const HISTORY_MS = 10_000;

/**
 * Streaming engines: once the caller has been silent this long (every result of the last speech is in by then),
 * silent audio goes to the STT in pieces of up to `SILENCE_BATCH_MS` instead of one write per 20 ms chunk. The
 * first chunk with sound flushes what is held and goes with it at once, so speech is never late; the STT hears the
 * same audio in the same order. A caller is silent while the agent speaks, most of a call: one socket write per
 * 20 ms per call was about an eighth of the platform's CPU at 300 calls.
 */
const QUIET_BEFORE_BATCHING_MS = 1500;
const SILENCE_BATCH_MS = 100;

/**
 * audio-in → transcript. A streaming engine (Deepgram live…) gets every chunk as it arrives, at a rate it accepts,
 * over a connection that survives a dropped socket (shared/engines/stt/reconnecting.ts); its partial and final results become
 * `transcript` frames. A batch engine (the local default) transcribes each stretch of speech whole at its end
 * (speech-start → speech-end from the VAD), and its result is a final `transcript` carrying the onset of the
 * speech it covers. The audio sent to the STT is counted for the bill (`audioSeconds`).
 */
export class SttStage extends Stage {
  private live: ReconnectingSttStream | null = null;
  private resampler: Resampler | null = null;
  private readonly streaming: boolean;
  private audioS = 0;
  /** Caller audio received so far (ms): the VAD's clock. */
  private audioInMs = 0;
  /**
   * Caller audio received before the STT stream opened (media flows while the session starts): a streaming
   * engine's times count from its own first sample, so its word timings are this much behind the VAD's clock.
   */
  private sttOffsetMs = 0;
  private closed = false;
  /** Batch: the speech being collected (null between utterances), and the audio just before the next one. */
  private speech: Buffer[] | null = null;
  private speechOnsetMs = 0;
  /** Batch: recent audio and the audio time (ms) each chunk starts at, oldest first from `historyHead`. */
  private history: Array<{ atMs: number; ms: number; pcm: Buffer }> = [];
  private historyHead = 0;
  /** Streaming: when the last chunk with sound arrived (the VAD's clock), and the silence held back since. */
  private lastSoundMs = 0;
  /** Streaming: the line's noise floor (20 ms chunks): audio at it is silence, batched like a clean line's. */
  private readonly floor = new NoiseFloor(20);
  private held: Buffer[] = [];
  private heldMs = 0;

  constructor(
    private readonly engine: SttEngine,
    private readonly opts: SttStageOptions,
  ) {
    super('stt', { sync: true });
    this.streaming = engine.capabilities.streaming;
  }

  /** Seconds of caller audio sent to the STT (resent audio after a reconnection included: it is billed again). */
  get audioSeconds(): number {
    return this.audioS + (this.live?.resentSeconds ?? 0);
  }

  /**
   * Of `audioSeconds`, what engines other than the session's own heard (a fallback, by provider): the bill follows
   * the engine that transcribed.
   */
  get otherEngineSeconds(): Record<string, number> {
    const live = this.live;
    if (!(live instanceof FallbackSttStream)) return {};
    const out: Record<string, number> = {};
    for (const [name, s] of Object.entries(live.secondsBy)) if (name !== this.engine.provider) out[name] = s;
    return out;
  }

  /** The engine hearing the audio now: the session's own, or the fallback it moved to. */
  get engineInUse(): string {
    return this.live instanceof FallbackSttStream ? this.live.engine : this.engine.provider;
  }

  /** Times the stream moved from one engine to another (to a fallback, or back). */
  get engineSwitches(): number {
    return this.live instanceof FallbackSttStream ? this.live.switches : 0;
  }

  protected override onSystem(frame: SystemFrame): void {
    if (frame.kind === 'start') this.open();
    else if (frame.kind === 'end') this.close();
    else if (frame.kind === 'speech-start' && !this.streaming && !this.speech) {
      // A batch engine starts collecting the utterance at the VAD's onset in audio time, with the audio just
      // before it, however much has arrived since.
      const from = frame.atMs - PREROLL_MS;
      this.speech = [];
      for (let i = this.historyHead; i < this.history.length; i++) {
        const h = this.history[i]!;
        if (h.atMs + h.ms > from) this.speech.push(h.pcm);
      }
      this.history = [];
      this.historyHead = 0;
      this.speechOnsetMs = frame.atMs;
    }
  }

  protected override onData(frame: DataFrame): void {
    if (frame.kind === 'audio-in') {
      this.audio(frame.pcm);
      this.audioInMs += (frame.pcm.length / 2 / this.opts.inRate) * 1000;
    } else if (!this.streaming && frame.kind === 'speech-end') this.transcribeSpeech(frame.lastSpeechMs);
    this.emit(frame);
  }

  /** Opens the provider's streaming STT when the engine streams (otherwise utterances are transcribed whole). */
  private open(): void {
    if (!this.streaming || this.live) return;
    const { inRate, language, apiKey, log } = this.opts;
    const rates = this.engine.capabilities.sampleRates;
    const rate = rates.includes(inRate) || rates.length === 0 ? inRate : rates[0]!;
    if (rate !== inRate) this.resampler = new Resampler(inRate, rate);
    this.sttOffsetMs = this.audioInMs;
    const open = () =>
      this.engine.stream({ sampleRate: rate, language, apiKey, languageModel: this.opts.languageModel });
    const handlers = {
      onFail: (e: unknown) => {
        if (!this.closed) this.onError(this.name, e);
      },
      onReconnect: (attempt: number, e: unknown) =>
        log.warn({ attempt, err: (e as Error | null)?.message }, 'stt stream dropped; reconnecting'),
    };
    const fb = this.opts.fallback;
    const fbRates = fb?.engine.capabilities.sampleRates ?? [];
    this.live =
      fb && fb.engine.capabilities.streaming && (fbRates.length === 0 || fbRates.includes(rate))
        ? new FallbackSttStream(
            [
              { name: this.engine.provider, open },
              {
                name: fb.engine.provider,
                open: () => fb.engine.stream({ sampleRate: rate, language, languageModel: fb.languageModel }),
              },
            ],
            rate * 2,
            {
              ...handlers,
              onEvent: (ev, engine) => this.heard(ev, engine),
              onSwitch: (from, to, why) =>
                log.warn(
                  { from, to, err: why === 'recovery' ? 'recovery' : (why as Error | null)?.message },
                  'stt engine switched',
                ),
            },
          )
        : new ReconnectingSttStream(open, rate * 2, { ...handlers, onEvent: (ev) => this.heard(ev) });
    this.live.start();
  }

  private close(): void {
    this.closed = true;
    try {
      this.flushHeld();
      this.live?.end();
      this.live?.close();
    } catch {
      // closing a stream that already failed
    }
  }

  private audio(pcm: Buffer): void {
    const seconds = pcm.length / 2 / this.opts.inRate;
    if (this.live) {
      const out = this.resampler ? this.resampler.processPcm(pcm) : pcm;
      this.audioS += seconds;
      const level = rms16(pcmToInt16(pcm));
      this.floor.push(level);
      const sound = level >= this.floor.gateRms;
      if (sound) this.lastSoundMs = this.audioInMs + seconds * 1000;
      else if (this.audioInMs - this.lastSoundMs >= QUIET_BEFORE_BATCHING_MS) {
        // Long quiet: hold the silence (a copy: the transport may reuse its buffer) until a batch is full.
        this.held.push(out === pcm ? Buffer.from(pcm) : out);
        this.heldMs += seconds * 1000;
        if (this.heldMs >= SILENCE_BATCH_MS) this.flushHeld();
        return;
      }
      this.flushHeld();
      // Measured above: the fallback's stall watch does not measure it again.
      this.live.write(out, sound);
    } else if (!this.streaming) {
      if (this.speech) this.speech.push(Buffer.from(pcm));
      else this.remember(Buffer.from(pcm), seconds * 1000);
    }
  }

  /** Keeps a chunk (batch, between utterances), dropping what is older than `HISTORY_MS`. */
  private remember(pcm: Buffer, ms: number): void {
    this.history.push({ atMs: this.audioInMs, ms, pcm });
    const horizon = this.audioInMs + ms - HISTORY_MS;
    while (
      this.historyHead < this.history.length &&
      this.history[this.historyHead]!.atMs + this.history[this.historyHead]!.ms <= horizon
    ) {
      this.historyHead++;
    }
    // Compact now and then, not per chunk.
    if (this.historyHead > 256) {
      this.history = this.history.slice(this.historyHead);
      this.historyHead = 0;
    }
  }

  /** Sends the silence held back, as one write. */
  private flushHeld(): void {
    if (this.held.length === 0) return;
    const batch = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held);
    this.held = [];
    this.heldMs = 0;
    this.live?.write(batch, false);
  }

  /** A result of the stream; `engine` when the call's STT can fall back (finals say which engine made them). */
  private heard(ev: SttStreamEvent, engine?: string): void {
    if (this.closed) return;
    if (ev.type === 'progress') {
      const decodedMs = ev.decoded * 1000 + this.sttOffsetMs;
      this.emit({ kind: 'stt-progress', decodedMs, settledMs: ev.settled * 1000 + this.sttOffsetMs });
      return;
    }
    const atMs = this.opts.now();
    if (ev.type === 'partial') {
      this.emit({
        kind: 'transcript',
        text: ev.text,
        final: false,
        atMs,
        ...(ev.end !== undefined ? { endMs: ev.end * 1000 + this.sttOffsetMs } : {}),
      });
    } else {
      const endMs = ev.end * 1000 + this.sttOffsetMs;
      this.emit({ kind: 'transcript', text: ev.text, final: true, atMs, endMs, ...(engine ? { engine } : {}) });
    }
  }

  private transcribeSpeech(lastSpeechMs: number): void {
    const chunks = this.speech;
    if (!chunks) return;
    this.speech = null;
    const onsetMs = this.speechOnsetMs;
    const pcm = Buffer.concat(chunks);
    this.audioS += pcm.length / 2 / this.opts.inRate;
    void this.engine
      .transcribe({
        pcm,
        sampleRate: this.opts.inRate,
        language: this.opts.language,
        mode: 'fast',
        timestamps: 'segment',
        diarize: false,
        apiKey: this.opts.apiKey,
        languageModel: this.opts.languageModel,
        owner: { tenant: this.opts.developerId, live: true },
      })
      .then(
        (r) => {
          if (this.closed) return;
          const at = this.opts.now();
          this.emit({
            kind: 'transcript',
            text: r.text,
            final: true,
            atMs: at,
            endMs: lastSpeechMs,
            batchOnsetMs: onsetMs,
          });
        },
        (e: Error) => {
          this.opts.log.warn({ err: e.message }, 'utterance transcription failed');
          if (this.closed) return;
          const at = this.opts.now();
          this.emit({ kind: 'transcript', text: '', final: true, atMs: at, batchOnsetMs: onsetMs, failed: true });
        },
      );
  }
}
