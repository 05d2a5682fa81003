import { percentile, rmsToDbfs } from '../../../../shared/kernel/audio/noise-floor.ts';

/** The talker's level: the median of the line's last 320 ms (10 Silero frames at 8 kHz). */
const RECENT_FRAMES = 10;
/** The background: the levels of the last 2.5 s of the line that were not a talker standing over it. */
const BACKGROUND_FRAMES = 78;
/** Background frames (about half a second) before the background is known. */
const MIN_BACKGROUND_FRAMES = 16;
/** The background is this percentile of its frames' levels: its loud moments. */
const BACKGROUND_PCT = 90;
/** The background is voices when the VAD was in speech for at least this share of it (a crowd: most of it). */
const VOICE_SHARE = 0.25;
/** A talker stands this far (dB) over the background's loud moments: the caller, not the crowd behind them. */
export const TALKER_OVER_BACKGROUND_DB = 4;
/** Levels under this are digital silence: all the same here. */
const SILENCE_DB = -90;

/**
 * The silence gate for a talker over background voices (issue 31, babble). The VAD (Silero) scores a crowd as
 * speech at every level, and the floor gate (noise-floor.ts, 3 dB over the line's minimum) does not hold a crowd
 * back — it sits 10–15 dB over its own quiet moments — so on a line carrying voices the VAD, once in speech, stays
 * in speech: the caller's turn never ends (bench:robustness, babble 10–20 dB: 9–46 of 50 turns still open 3 s after
 * the last word). What tells the crowd from the caller is level: the caller is louder and closer.
 *
 * While the VAD is in speech and the line's last 320 ms stand `TALKER_OVER_BACKGROUND_DB` over the loud moments
 * (90th percentile) of the 2.5 s of background before them, a talker is on the line; until that speech ends, frames
 * no louder than those loud moments are the background, silence like the floor. Only on a line whose background is
 * voices (the VAD in speech for `VOICE_SHARE` of it); on a clean line or steady noise `gateDb` is −∞ and the floor's
 * gate is the only one. A talker's frames never join the background — neither those over it nor a run of speech
 * that began on a line without voices — so the caller is judged against the crowd, not against themselves.
 * Known limit: a caller who talks within the call's first half second, before the line is known, is taken for
 * the line's background until 2.5 s of other audio have replaced them.
 */
export class BackgroundGate {
  private readonly recent = new Float64Array(RECENT_FRAMES);
  private recentCount = 0;
  private recentHead = 0;
  /** Whether the VAD was in speech at each recent frame. */
  private readonly recentSpeech = new Uint8Array(RECENT_FRAMES);
  /** Whether each recent frame's speech run joins the background (`runJoins` when it was pushed). */
  private readonly recentJoins = new Uint8Array(RECENT_FRAMES);
  private wasInSpeech = false;
  /** The current speech run began on a line carrying voices (or not yet known): it is the background's. */
  private runJoins = true;
  private readonly background = new Float64Array(BACKGROUND_FRAMES);
  private readonly backgroundSpeech = new Uint8Array(BACKGROUND_FRAMES);
  private backgroundCount = 0;
  private backgroundHead = 0;
  /** The background's loud moments (dBFS) while a talker is on the line; undefined when none is. */
  private talkerOverDb: number | undefined;

  /**
   * One scored frame's level (16-bit RMS) and whether the VAD is in speech (before this frame). Call once per frame,
   * before `gateDb`.
   */
  push(levelRms: number, inSpeech: boolean): void {
    const db = rmsToDbfs(levelRms);
    const level = Math.max(SILENCE_DB, Number.isFinite(db) ? db : SILENCE_DB);
    if (!inSpeech && this.talkerOverDb !== undefined) {
      // The speech a talker stood over the background in has ended: the line is the background's again, but the
      // last 320 ms are the end of the talker's turn, not the background.
      this.talkerOverDb = undefined;
      this.recentCount = 0;
    }
    // A run of speech that begins on a line without voices is a talker's (the caller's turn on a quiet or noisy
    // line): it never joins the background, or a long turn would become the line's "voices" and the caller's
    // next loud word would be judged against their own level.
    if (inSpeech && !this.wasInSpeech)
      this.runJoins = this.backgroundCount < MIN_BACKGROUND_FRAMES || this.voiceShare() >= VOICE_SHARE;
    this.wasInSpeech = inSpeech;
    // The frame 320 ms old leaves the talker's window; it is the background's unless a talker is on the line.
    const old = this.recentHead;
    if (
      this.recentCount === RECENT_FRAMES &&
      this.talkerOverDb === undefined &&
      (!this.recentSpeech[old] || this.recentJoins[old])
    )
      this.pushBackground(this.recent[old]!, this.recentSpeech[old]! === 1);
    this.recent[this.recentHead] = level;
    this.recentSpeech[this.recentHead] = inSpeech ? 1 : 0;
    this.recentJoins[this.recentHead] = this.runJoins ? 1 : 0;
    this.recentHead = (this.recentHead + 1) % RECENT_FRAMES;
    this.recentCount = Math.min(RECENT_FRAMES, this.recentCount + 1);
    if (!inSpeech || this.talkerOverDb !== undefined || this.recentCount < RECENT_FRAMES) return;
    if (this.backgroundCount < MIN_BACKGROUND_FRAMES || this.voiceShare() < VOICE_SHARE) return;
    const loud = percentile(Array.from(this.background.subarray(0, this.backgroundCount)), BACKGROUND_PCT);
    if (percentile(Array.from(this.recent), 50) < loud + TALKER_OVER_BACKGROUND_DB) return;
    this.talkerOverDb = loud;
    // The frames of the talker's window are theirs: they never join the background.
    this.recentCount = 0;
  }

  /** The share of the background the VAD was in speech for: a quarter or more, the line carries voices. */
  private voiceShare(): number {
    let speech = 0;
    for (let i = 0; i < this.backgroundCount; i++) speech += this.backgroundSpeech[i]!;
    return this.backgroundCount === 0 ? 0 : speech / this.backgroundCount;
  }

  /** Frames under this level (dBFS) are the line's background while a talker is on it; −∞ when none is. */
  get gateDb(): number {
    return this.talkerOverDb ?? -Infinity;
  }

  private pushBackground(levelDb: number, speech: boolean): void {
    this.background[this.backgroundHead] = levelDb;
    this.backgroundSpeech[this.backgroundHead] = speech ? 1 : 0;
    this.backgroundHead = (this.backgroundHead + 1) % BACKGROUND_FRAMES;
    this.backgroundCount = Math.min(BACKGROUND_FRAMES, this.backgroundCount + 1);
  }
}
