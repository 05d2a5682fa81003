import { percentile } from '../../../../shared/kernel/audio/noise-floor.ts';

/** The speech: the line's last 320 ms (ms). */
const RECENT_MS = 320;
/** The background: the last 2.5 s of the line before the speech that was not the caller's (32 ms frames). */
const BACKGROUND_FRAMES = 78;
/** Frames kept: the background and the speech, and up to 5 s of the caller's own speech between them. */
const KEPT = 256;
/** Frames of background at least (about 300 ms) before a contrast is given. */
const MIN_BACKGROUND_FRAMES = 10;
/** The line carries voices when at least this share of its last 2.5 s (the caller's own left out) was speech to the VAD. */
const VOICE_SHARE = 0.25;
/** Levels under this are digital silence: all the same to a contrast. */
const SILENCE_DB = -90;
/** The background is this percentile of its frames' levels: the loud moments of what the line carries. */
const BACKGROUND_PCT = 90;
/** The speech is this percentile of its frames' levels: where the voice sits, not one loud syllable. */
const SPEECH_PCT = 50;
/** The caller's own speech level: a histogram of their frames' levels, 1 dB a bin from SILENCE_DB to 0 dBFS. */
const CALLER_PCT = 75;
const LEVEL_BINS = -SILENCE_DB + 1;
/** Frames of the caller's own speech (about half a second) before their level is known. */
const MIN_CALLER_FRAMES = 16;

/**
 * The line's level, frame by frame (the VAD's `vad-frame` levels), for the interruption detector: how far what the
 * line carries now stands above the voices it carried before (`contrastDb`): the median level of its last 320 ms
 * over the 90th percentile of the 2.5 s before them. A caller who talks over the agent is louder than the line's
 * background by about the call's SNR — 30 dB over a quiet line, 10 over a crowd at 10 dB — from their first
 * syllables on; background voices (babble, a television, a call centre) are the background: the VAD scores them as
 * speech at every level, but they never stand over their own loud moments by more than a few dB.
 *
 * The caller's own speech is not background: their turns, and speech over the agent once it is known to be theirs
 * (it interrupted, or its words were a backchannel: `callerSpoke`) — a caller who says "mm-hm" and then "wait,
 * stop" is judged against the line before the "mm-hm". No model and no transcript: two percentiles of ~90 frame
 * levels, only while speech over the agent is being decided, and a count per dB of the caller's own frames (how loud
 * they speak: `underCallerDb`).
 */
export class LineLevels {
  private readonly endMs = new Float64Array(KEPT);
  private readonly levelDb = new Float64Array(KEPT);
  /** The VAD was in speech: the onset (ms) of its speech run; NaN when not in speech. */
  private readonly run = new Float64Array(KEPT);
  /** The caller's own speech (1): never background. */
  private readonly own = new Uint8Array(KEPT);
  private head = 0;
  private count = 0;
  /** Every frame of the caller's own speech so far, by level: how loud the caller speaks on this line. */
  private readonly callerLevels = new Uint32Array(LEVEL_BINS);
  private callerFrames = 0;
  /** The median level of the last 320 ms as of the last `contrastDb()`. */
  private recentDb: number | undefined;

  /**
   * One scored frame: its end (audio ms), its level (dBFS), the onset of the speech run the VAD was in (null when
   * not in speech), and whether that run is the caller's turn.
   */
  push(endMs: number, levelDb: number, runOnsetMs: number | null, ownTurn = false): void {
    const i = this.head;
    this.endMs[i] = endMs;
    this.levelDb[i] = Math.max(SILENCE_DB, Number.isFinite(levelDb) ? levelDb : SILENCE_DB);
    this.run[i] = runOnsetMs ?? NaN;
    this.own[i] = ownTurn ? 1 : 0;
    if (ownTurn && runOnsetMs !== null) this.countCaller(this.levelDb[i]!);
    this.head = (i + 1) % KEPT;
    this.count = Math.min(KEPT, this.count + 1);
  }

  /** The speech run that began at `runOnsetMs` was the caller's (it interrupted, or was a backchannel): not background. */
  callerSpoke(runOnsetMs: number): void {
    for (let i = 0; i < this.count; i++)
      if (this.run[i] === runOnsetMs && !this.own[i]) {
        this.own[i] = 1;
        this.countCaller(this.levelDb[i]!);
      }
  }

  private countCaller(levelDb: number): void {
    this.callerLevels[Math.min(LEVEL_BINS - 1, Math.round(levelDb - SILENCE_DB))]!++;
    this.callerFrames++;
  }

  /**
   * How far (dB) the line's last 320 ms (as of the last `contrastDb()`) are under the caller's own speech: the
   * 75th percentile level of every frame of their turns (and of speech over the agent known to be theirs) over the
   * median of those 320 ms. Undefined until the caller has spoken for about half a second. A crowd behind the caller is under
   * their voice by about the call's SNR, however much the VAD takes it for speech; the caller talking over the agent
   * is within a few dB of how they spoke before.
   */
  underCallerDb(): number | undefined {
    if (this.callerFrames < MIN_CALLER_FRAMES || this.recentDb === undefined) return undefined;
    // The 75th percentile: a turn's frames include the pauses between its words, which the VAD still counts in it.
    let seen = 0;
    let bin = 0;
    while (bin < LEVEL_BINS - 1 && (seen += this.callerLevels[bin]!) < (this.callerFrames * CALLER_PCT) / 100) bin++;
    return bin + SILENCE_DB - this.recentDb;
  }

  /**
   * The `pct`th percentile level (dBFS) of the frames kept that end in (`fromMs`, `toMs`], or undefined with fewer
   * than `minFrames` of them (the last 8 s are kept).
   */
  levelOver(fromMs: number, toMs: number, pct: number, minFrames = 3): number | undefined {
    const xs: number[] = [];
    for (let k = 1; k <= this.count; k++) {
      const i = (this.head - k + KEPT) % KEPT;
      const end = this.endMs[i]!;
      if (end <= fromMs) break;
      if (end <= toMs) xs.push(this.levelDb[i]!);
    }
    return xs.length >= minFrames ? percentile(xs, pct) : undefined;
  }

  /**
   * How far (dB) the line's last 320 ms stand above its background: their median level over the background's 90th
   * percentile. Undefined until the line has been heard for 0.6 s (the call's first moments: nothing to compare).
   */
  contrastDb(): number | undefined {
    if (this.count === 0) return undefined;
    const last = this.endMs[(this.head - 1 + KEPT) % KEPT]!;
    const recent: number[] = [];
    const background: number[] = [];
    // Newest first: the recent frames, then the background back to its size.
    for (let k = 1; k <= this.count && background.length < BACKGROUND_FRAMES; k++) {
      const i = (this.head - k + KEPT) % KEPT;
      if (this.endMs[i]! > last - RECENT_MS) recent.push(this.levelDb[i]!);
      else if (!this.own[i]) background.push(this.levelDb[i]!);
    }
    this.recentDb = recent.length >= 3 ? percentile(recent, SPEECH_PCT) : undefined;
    if (background.length < MIN_BACKGROUND_FRAMES || this.recentDb === undefined) return undefined;
    return this.recentDb - percentile(background, BACKGROUND_PCT);
  }

  /**
   * Whether the line carries voices: a quarter of its last 2.5 s (the caller's own speech left out) was speech to
   * the VAD. Silence, hiss, hum, crackle and music do not (the VAD's floor gate deals with those); babble, a
   * television or a call centre do. Speech over the agent not yet known to be the caller's counts: a caller who
   * talks on over the agent for a second makes the line "carry voices" too, which is why the interruption detector
   * reads the contrast at its highest since the speech began (the caller stood out from the line when they started).
   */
  carriesVoices(): boolean {
    let all = 0;
    let speech = 0;
    for (let k = 1; k <= this.count && all < BACKGROUND_FRAMES; k++) {
      const i = (this.head - k + KEPT) % KEPT;
      if (this.own[i]) continue;
      all++;
      if (!Number.isNaN(this.run[i]!)) speech++;
    }
    return all >= MIN_BACKGROUND_FRAMES && speech >= VOICE_SHARE * all;
  }
}
