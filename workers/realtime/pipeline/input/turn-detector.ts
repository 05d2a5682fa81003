/**
 * Turns per-frame VAD probabilities into speech start/end events with the timing the traces need. Speech starts
 * after `startMs` of consecutive speech frames, or on a speech frame that ends `startMs` of sound over the line's
 * floor (a click or a cough shorter than that never starts anything), and ends after `endpointMs` of silence
 * (endpointing). Times are stream milliseconds.
 */
export interface TurnDetectorOptions {
  threshold: number;
  /** Speech must last this long before it counts as speech. */
  startMs: number;
  /** Silence that ends an utterance (changed as the transcript grows: see `setEndpointMs`). */
  endpointMs: number;
  /** Silence after which the caller counts as quiet (a `pause`, once per silence) before the endpoint; 0 = never. */
  pauseMs?: number;
}

export type TurnDetectorEvent =
  | { type: 'start'; onsetMs: number; atMs: number }
  | { type: 'pause'; lastSpeechMs: number; atMs: number }
  | { type: 'resume'; atMs: number }
  | { type: 'end'; onsetMs: number; lastSpeechMs: number; atMs: number };

export class TurnDetector {
  private speaking = false;
  private runStart: number | null = null;
  private onsetMs = 0;
  private lastSpeechEnd = 0;
  private pauseReported = false;
  /** Audio time up to which the detector has heard (frames scored, or silence known). */
  private heardUntil = 0;
  private endpointMs: number;
  private pauseMs: number;

  constructor(private readonly opts: TurnDetectorOptions) {
    this.endpointMs = opts.endpointMs;
    this.pauseMs = opts.pauseMs ?? 0;
  }

  /** The silence after which a pause is reported (0 = never); set from what was said, like the endpoint. */
  setPauseMs(ms: number): void {
    this.pauseMs = ms;
  }

  /** The silence that ends the current utterance (adaptive endpointing sets it from what was said so far). */
  setEndpointMs(ms: number): void {
    this.endpointMs = ms;
  }

  get currentEndpointMs(): number {
    return this.endpointMs;
  }

  /** End of the last frame scored as speech (or heard as speech by the STT): where the caller's speech ends so far. */
  get lastSpeechMs(): number {
    return this.lastSpeechEnd;
  }

  /**
   * An utterance that ended (at `lastSpeechMs`, begun at `onsetMs`) turns out not to be finished: a late final
   * transcript says so. It goes on as if the endpoint had not been reached — quiet (paused) since `lastSpeechMs` —
   * and ends once `endpointMs` of silence has passed, or resumes with new speech. False (and nothing changes) when
   * that much silence has already been heard, or a new utterance has started since.
   */
  reopen(onsetMs: number, lastSpeechMs: number, endpointMs: number): boolean {
    if (this.speaking || this.runStart !== null || this.heardUntil - lastSpeechMs >= endpointMs) return false;
    this.speaking = true;
    this.onsetMs = onsetMs;
    this.lastSpeechEnd = Math.max(this.lastSpeechEnd, lastSpeechMs);
    this.pauseReported = true;
    this.endpointMs = endpointMs;
    return true;
  }

  get inSpeech(): boolean {
    return this.speaking;
  }

  /** When the current utterance started, or null outside speech. */
  get currentOnsetMs(): number | null {
    return this.speaking ? this.onsetMs : null;
  }

  /** How long the current utterance has lasted at `nowMs` (0 outside speech). */
  speechDuration(nowMs: number): number {
    return this.speaking ? nowMs - this.onsetMs : 0;
  }

  /**
   * One VAD frame `[atMs, atMs + frameMs)` with its speech probability. `soundFromMs`: where the run of sound over
   * the line's floor that this frame belongs to began (the VAD stage's gate), when known: a speech frame that ends a
   * run of sound of `startMs` already starts speech (onset: this frame), rather than waiting for a second frame to
   * score over the threshold — the model scores a soft onset ("w…ait") as speech only at the vowel.
   */
  push(prob: number, atMs: number, frameMs: number, soundFromMs = atMs): TurnDetectorEvent | null {
    const isSpeech = prob >= this.opts.threshold;
    const end = atMs + frameMs;
    this.heardUntil = Math.max(this.heardUntil, end);
    if (isSpeech) {
      this.lastSpeechEnd = end;
      if (this.speaking && this.pauseReported) {
        this.pauseReported = false;
        return { type: 'resume', atMs };
      }
      this.pauseReported = false;
      if (this.runStart === null) this.runStart = atMs;
      if (!this.speaking && end - Math.min(this.runStart, soundFromMs) >= this.opts.startMs) {
        this.speaking = true;
        this.onsetMs = this.runStart;
        return { type: 'start', onsetMs: this.onsetMs, atMs: end };
      }
      return null;
    }
    if (!this.speaking) {
      this.runStart = null;
      return null;
    }
    return this.endIfSilentFor(end);
  }

  /**
   * Audio up to `atMs` is known to be silent (by its energy) although it does not yet fill a VAD frame: ends the
   * utterance as soon as the endpointing silence has passed instead of at the next frame boundary (up to a frame,
   * 32 ms for Silero, later).
   */
  silentUntil(atMs: number): TurnDetectorEvent | null {
    this.heardUntil = Math.max(this.heardUntil, atMs);
    return this.speaking ? this.endIfSilentFor(atMs) : null;
  }

  /**
   * Another detector (the STT's word timings) heard speech up to `atMs` that this one scored as silence — a soft
   * onset after a pause ("…on | Tuesday"), a quiet word. The silence restarts from there, so a pause the model
   * misjudged does not end the utterance; after a reported pause it is a `resume`.
   */
  heardSpeechUntil(atMs: number): TurnDetectorEvent | null {
    if (!this.speaking || atMs <= this.lastSpeechEnd) return null;
    this.lastSpeechEnd = atMs;
    if (!this.pauseReported) return null;
    this.pauseReported = false;
    return { type: 'resume', atMs };
  }

  /**
   * The STT timed words it had already sent as ending later than this detector's last speech (its interims caught
   * up, or its final): the speech ended there, in a soft tail the VAD scored as silence. The silence is measured
   * from there; unlike `heardSpeechUntil` this is no new speech, so a reported pause stands (no `resume`).
   */
  speechEndedAt(atMs: number): void {
    if (this.speaking && atMs > this.lastSpeechEnd) this.lastSpeechEnd = atMs;
  }

  /**
   * The turn stage judged the speech after `lastSpeechMs` not the caller's (a crowd behind them that the STT found no
   * words in): the utterance ends now, its speech ending there. The next speech frame begins a new run.
   */
  endSpeech(lastSpeechMs: number): TurnDetectorEvent | null {
    if (!this.speaking) return null;
    this.speaking = false;
    this.pauseReported = false;
    this.runStart = null;
    return { type: 'end', onsetMs: this.onsetMs, lastSpeechMs, atMs: this.heardUntil };
  }

  private endIfSilentFor(atMs: number): TurnDetectorEvent | null {
    const silent = atMs - this.lastSpeechEnd;
    if (silent < this.endpointMs) {
      if (this.pauseMs <= 0 || this.pauseReported || silent < this.pauseMs) return null;
      this.pauseReported = true;
      return { type: 'pause', lastSpeechMs: this.lastSpeechEnd, atMs };
    }
    this.speaking = false;
    this.pauseReported = false;
    this.runStart = null;
    return { type: 'end', onsetMs: this.onsetMs, lastSpeechMs: this.lastSpeechEnd, atMs };
  }
}
