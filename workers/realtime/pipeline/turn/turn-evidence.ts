import { endOfUtteranceProsody, RecentAudio } from '../../../../shared/kernel/audio/prosody.ts';
import { pcmToInt16 } from '../../../../shared/kernel/audio/pcm.ts';
import { decideWindow, type EndpointingPolicy, type TurnEvidence, type WindowReason } from './endpointing.ts';

const TAIL_MS = 120;
/** Audio read for the prosody of an end: the last syllables and enough before them for the speaker's level. */
const SPAN_MS = 1200;
const RECOMPUTE_MS = 200;

/**
 * This call's STT lag so far: how long after the audio a final's words end did the final arrive (audio clock, so a
 * loaded event loop does not count). The expectation is a high quantile of the recent finals, or `priorMs` before
 * any: how long to give the words to catch up before falling back on what there is.
 */
export class SttLag {
  private readonly recent: number[] = [];

  constructor(private readonly priorMs = 300) {}

  observe(lagMs: number): void {
    if (!Number.isFinite(lagMs) || lagMs < 0) return;
    this.recent.push(lagMs);
    if (this.recent.length > 8) this.recent.shift();
  }

  get samples(): number {
    return this.recent.length;
  }

  /** The second-highest recent lag (the highest once there are fewer than 4): jitter included, one outlier not. */
  expectedMs(): number {
    if (this.recent.length === 0) return this.priorMs;
    const s = [...this.recent].sort((a, b) => b - a);
    return s[this.recent.length >= 4 ? 1 : 0]!;
  }
}

/**
 * Everything the turn decision reads besides the words' text: where the transcript's words end against the audio
 * (interim and final word timings), this call's STT lag, and the prosody of the end of the speech (read from the
 * caller's last 1.5 s of audio once per pause, cached for that pause). Fed by the caller side; decides with
 * endpointing.ts's `decideWindow`.
 */
export class TurnEvidenceTracker {
  readonly lag = new SttLag();
  private readonly audio: RecentAudio;
  /** Audio ms where the current utterance's transcribed words end (0 = none yet). */
  private wordsEndMs = 0;
  /** Caller audio received so far (ms): the STT has heard it, less its lag. */
  private heardMs = 0;
  private prosodyFor: { lastSpeechMs: number; score: number } | null = null;
  /** The last decision, for the trace and logs. */
  last: { windowMs: number; reason: WindowReason } | null = null;

  /**
   * `streaming`: the STT streams timed, punctuated results (the streaming vendors). A batch engine transcribes the
   * utterance at its end: there are no word timings to compare while it goes on, and no punctuation to miss.
   */
  constructor(
    rate: number,
    private readonly streaming: boolean,
  ) {
    this.audio = new RecentAudio(rate, 2000);
  }

  /** Caller PCM (s16le), as it arrives. */
  onAudio(pcm: Buffer): void {
    this.audio.push(pcmToInt16(pcm));
    this.heardMs += (pcm.length / 2 / this.audio.rate) * 1000;
  }

  /** A new utterance: nothing of it is transcribed yet. */
  reset(): void {
    this.wordsEndMs = 0;
    this.prosodyFor = null;
  }

  /** An interim result whose last word ends at `endMs` (audio). */
  onPartial(endMs: number | undefined): void {
    if (endMs !== undefined) this.wordsEndMs = Math.max(this.wordsEndMs, endMs);
  }

  /** A final whose words end at `endMs`, arriving when `audioNowMs` of audio had been received. */
  onFinal(endMs: number, audioNowMs: number): void {
    this.wordsEndMs = Math.max(this.wordsEndMs, endMs);
    this.lag.observe(audioNowMs - endMs);
  }

  /**
   * How much of the speech (up to the VAD's `lastSpeechMs`) the words do not cover yet (0 for a batch STT). Speech
   * older than the STT's lag that it sent no words for is covered: it has had that audio and found no words in it (a
   * crowd or a noise the VAD scores as speech after the caller's last word). Only speech newer than the lag may
   * still be words on their way.
   */
  uncoveredMs(lastSpeechMs: number): number {
    if (!this.streaming) return 0;
    const transcribedMs = this.wordsEndMs > 0 ? Math.max(this.wordsEndMs, this.heardMs - this.lag.expectedMs()) : 0;
    return lastSpeechMs - transcribedMs;
  }

  /**
   * The STT has had the speech up to `lastSpeechMs` for its lag (a streaming STT only): words for it would have come
   * by now. A final that ends before speech the STT found no words in (a crowd the VAD scored as speech after the
   * caller's last word) covers that speech: the turn need not wait out the engine's wait for a final that will not
   * come.
   */
  heardPast(lastSpeechMs: number): boolean {
    return this.streaming && this.heardMs - this.lag.expectedMs() >= lastSpeechMs;
  }

  /**
   * When the last decision found the words behind the speech (`stale`): the audio time by which the STT will have
   * heard all of it (the VAD's `lastSpeechMs` plus the STT's lag), when the words decide again; otherwise null.
   */
  recheckAtMs(lastSpeechMs: number): number | null {
    return this.streaming && this.last?.reason === 'stale' ? lastSpeechMs + this.lag.expectedMs() : null;
  }

  /** The prosody score of the speech ending at `lastSpeechMs` (computed once per end). */
  prosody(lastSpeechMs: number): number {
    // Once per pause: the end moving by a few frames (the STT re-timing the last word) does not change the contour.
    const cached = this.prosodyFor;
    if (cached && Math.abs(cached.lastSpeechMs - lastSpeechMs) <= RECOMPUTE_MS) return cached.score;
    // A little past the VAD's last speech frame: the VAD scores a word's fading tail as silence, and the fade is
    // one of the cues (the silence after it is unvoiced and does not count).
    const pcm = this.audio.slice(lastSpeechMs + TAIL_MS, SPAN_MS);
    this.prosodyFor = { lastSpeechMs, score: endOfUtteranceProsody(pcm, this.audio.rate).score };
    return this.prosodyFor.score;
  }

  /**
   * The window for what was heard so far. `lastSpeechMs` is the VAD's last speech; `quiet` says the caller is
   * silent now (the prosody of an end is only read then: mid-speech there is no end to read).
   */
  decide(
    policy: EndpointingPolicy,
    heard: { text: string; final: boolean },
    lastSpeechMs: number,
    quiet: boolean,
  ): { windowMs: number; reason: WindowReason } {
    // The prosody is read only when the decision turns on it (stale words, an open or closed final): most pauses
    // are decided by their words, and reading the voice's end costs milliseconds of CPU per pause.
    const readProsody = () => (quiet ? this.prosody(lastSpeechMs) : null);
    const ev: TurnEvidence = {
      text: heard.text,
      final: heard.final,
      uncoveredMs: this.uncoveredMs(lastSpeechMs),
      get prosody() {
        return readProsody();
      },
      punctuated: this.streaming,
    };
    this.last = decideWindow(policy, ev);
    return this.last;
  }
}
