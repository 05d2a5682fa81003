import { Resampler } from '../../../../shared/kernel/audio/resampler.ts';
import { dbfsToRms, NoiseFloor, rmsToDbfs } from '../../../../shared/kernel/audio/noise-floor.ts';
import { pcmToInt16, rms16, SILENCE_RMS } from '../../../../shared/kernel/audio/pcm.ts';
import type { VadEngine, VadSession } from '../../../../shared/engines/vad/types.ts';
import { TurnDetector, type TurnDetectorEvent, type TurnDetectorOptions } from './turn-detector.ts';
import { isSystemFrame, type DataFrame, type Frame, type UpstreamFrame } from '../frames.ts';
import { Stage } from '../stage.ts';
import { BackgroundGate } from './background-gate.ts';

/** Queued 20 ms input frames beyond which the VAD sheds work (100 ms behind real time). */
const BACKLOG_SHED = 5;
/**
 * The most a speech start's sound onset may lead the VAD's (ms). Silero at 8 kHz first scores a soft onset as
 * speech 160–260 ms after the sound began ("okay", "wait"); on a line whose floor a crowd or music keeps crossing,
 * the sound before a run of speech can be seconds long, and is not the speech's.
 */
export const SOUND_LEAD_MAX_MS = 300;
/**
 * How long after the caller's last frame over the floor's gate that scored as speech the model still judges frames
 * under that gate (ms). A word's fade, an unvoiced consonant or a soft syllable after a short pause sits within
 * 3 dB of a noisy line's floor: the model calls it speech (as it does on the same call without the noise), and the
 * gate alone made it silence, so a 250 ms pause in a reading became 300 ms of "silence" and ended the turn (white
 * 15 dB, hum 10–30 dB: bench:robustness). Bounded from the last frame *over* the gate so the line's own noise, which
 * the model may keep scoring as speech, delays a turn's end by at most this much and never holds it open.
 */
export const UNDER_GATE_HOLD_MS = 100;

/**
 * audio-in → speech-start / pause / resume / end. Caller audio passes on at once (the STT and the turn stage hear
 * it when it arrives, however far the scoring lags) and is queued for scoring: resampled to the VAD's rate (state
 * kept across 20 ms chunks), cut into the VAD's frame size and scored; the turn detector adds the minimum-speech
 * and endpointing rules. A `vad-frame` after every scored frame lets the turn stage watch speech grow (barge-in).
 * The turn stage steers the endpointing window from upstream (`endpoint-window`, `heard-speech`).
 * Times are audio milliseconds since the stream began.
 */
export class VadStage extends Stage {
  private readonly session: VadSession;
  private readonly resampler: Resampler;
  /** Samples not scored yet (`buf[0, bufLen)`, less than one VAD frame between chunks): reused, not reallocated per chunk. */
  private buf = new Int16Array(1024);
  private bufLen = 0;
  private audioMs = 0;
  private readonly detector: TurnDetector;
  private readonly frameMs: number;
  private lastProb = 0;
  private shed = 0;
  /** The line's noise floor: a frame must be over it by a margin to be scored at all (noise-floor.ts). */
  readonly floor: NoiseFloor;
  /** A talker over background voices: the crowd's level is silence while the talker's speech lasts (background-gate.ts). */
  private readonly background = new BackgroundGate();
  /** Where the current run of frames over the floor's gate began (audio ms); NaN after a frame under it. */
  private soundFromMs = NaN;
  /**
   * Until when (audio ms) a frame under the floor's gate, but over the absolute `SILENCE_RMS`, is still scored while
   * the caller is in speech: `UNDER_GATE_HOLD_MS` after the last frame over the gate scored as speech. On a clean
   * line the gate is `SILENCE_RMS` itself, so nothing changes there.
   */
  private holdUntilMs = -Infinity;
  private readonly threshold: number;

  private readonly vad: VadEngine;

  constructor(vad: VadEngine, inRate: number, opts: TurnDetectorOptions) {
    // Scoring is queued (the model is async) but never cancelled: an interruption does not concern the caller's audio.
    super('vad', { cancellable: false });
    // A model that reads the line's rate natively (Silero at 8 kHz for phone calls) saves resampling every frame.
    this.vad = vad = vad.atRate?.(inRate) ?? vad;
    this.session = vad.session();
    this.resampler = new Resampler(inRate, vad.sampleRate);
    this.detector = new TurnDetector(opts);
    this.threshold = opts.threshold;
    this.frameMs = (vad.frameSamples / vad.sampleRate) * 1000;
    this.floor = new NoiseFloor(this.frameMs);
  }

  override push(frame: Frame): void {
    if (frame.kind === 'audio-in') {
      this.emit(frame); // heard downstream as it arrives…
      super.push(frame); // …and scored behind
    } else if (isSystemFrame(frame)) super.push(frame);
    else this.emit(frame); // not the VAD's: passes at once
  }

  protected override async onData(frame: DataFrame): Promise<void> {
    if (frame.kind !== 'audio-in') return this.emit(frame);
    const samples = this.resampler.passthrough ? pcmToInt16(frame.pcm) : this.resampler.process(pcmToInt16(frame.pcm));
    this.append(samples);
    const n = this.vad.frameSamples;
    let off = 0;
    for (; off + n <= this.bufLen; off += n) {
      const frame = this.buf.subarray(off, off + n);
      // Frames at the line's floor (its hiss or hum, or the near-digital silence of a clean line: under -56 dBFS at
      // least) are not speech: skip the model, which is most of the CPU of a call, and which scores steady noise as
      // speech often enough to cut the agent off and never end the caller's turn.
      let prob: number;
      const level = rms16(frame);
      this.floor.push(level);
      this.background.push(level, this.detector.inSpeech);
      const over = level >= this.gateRms;
      if (!over) this.soundFromMs = NaN;
      else if (Number.isNaN(this.soundFromMs)) this.soundFromMs = this.audioMs;
      // Hysteresis: once the caller speaks, the bar to go on is the absolute gate, for a while (UNDER_GATE_HOLD_MS).
      const held = !over && this.audioMs < this.holdUntilMs && level >= SILENCE_RMS && this.detector.inSpeech;
      if (!over && !held) prob = 0;
      else if (this.backlog > BACKLOG_SHED && this.shed++ % (this.backlog > 2 * BACKLOG_SHED ? 4 : 2) !== 0) {
        // Load shedding: the stage lags real time, so score only every 2nd (or 4th) frame and reuse the last score.
        prob = this.lastProb;
      } else {
        // The model gets its own copy: the buffer is reused for the next chunk.
        prob = await this.session.push(frame.slice());
      }
      this.lastProb = prob;
      const at = this.audioMs;
      if (over && prob >= this.threshold) this.holdUntilMs = at + this.frameMs + UNDER_GATE_HOLD_MS;
      this.audioMs += this.frameMs;
      this.report(this.detector.push(prob, at, this.frameMs, over ? this.soundFromMs : at));
      this.emit({
        kind: 'vad-frame',
        endMs: this.audioMs,
        lastSpeechMs: this.detector.lastSpeechMs,
        levelDb: rmsToDbfs(level),
      });
    }
    this.buf.copyWithin(0, off, this.bufLen);
    this.bufLen -= off;
    this.checkSilentTail();
  }

  private append(samples: Int16Array): void {
    const need = this.bufLen + samples.length;
    if (need > this.buf.length) {
      const grown = new Int16Array(Math.max(need, 2 * this.buf.length));
      grown.set(this.buf.subarray(0, this.bufLen));
      this.buf = grown;
    }
    this.buf.set(samples, this.bufLen);
    this.bufLen = need;
  }

  protected override onUpstream(frame: UpstreamFrame): void {
    if (frame.kind === 'heard-speech') {
      this.report(this.detector.heardSpeechUntil(frame.untilMs));
      return;
    }
    if (frame.kind === 'speech-ended-at') return this.detector.speechEndedAt(frame.atMs);
    if (frame.kind === 'end-speech') return this.report(this.detector.endSpeech(frame.lastSpeechMs));
    if (frame.kind === 'reopen') {
      if (!this.detector.reopen(frame.onsetMs, frame.lastSpeechMs, frame.endpointMs)) return;
      this.emit({ kind: 'speech-reopened', lastSpeechMs: this.detector.lastSpeechMs });
      // The silence already heard may be the new window's: decide now rather than at the next audio frame.
      if (!this.busy) this.checkSilentTail();
      return;
    }
    this.detector.setEndpointMs(frame.endpointMs);
    if (frame.pauseMs !== undefined) this.detector.setPauseMs(frame.pauseMs);
    // The window changed (a transcript came in): decide the endpoint now if the silence already heard is long
    // enough, rather than at the next audio frame. Only when the stage is not behind its input.
    if (frame.reconsider && !this.busy) this.checkSilentTail();
  }

  /**
   * A phone line between words carries (near-)digital silence, or its noise floor: when the samples that do not fill
   * a frame yet are at the floor too, the endpoint is decided now rather than when the frame completes.
   */
  private checkSilentTail(): void {
    if (!this.detector.inSpeech) return;
    const tail = this.buf.subarray(0, this.bufLen);
    // Within the hold, a tail under the floor's gate may still be scored as speech when its frame completes.
    const gate = this.audioMs < this.holdUntilMs ? SILENCE_RMS : this.gateRms;
    if (tail.length > 0 && rms16(tail) >= gate) return;
    this.report(this.detector.silentUntil(this.audioMs + (tail.length / this.vad.sampleRate) * 1000));
  }

  /** Audio under this RMS is silence: the line's floor, or the background voices a talker stands over. */
  private get gateRms(): number {
    return Math.max(this.floor.gateRms, dbfsToRms(this.background.gateDb));
  }

  /**
   * Where the sound of speech the VAD heard begin at `onsetMs` began: the run of frames over the floor's gate that
   * the speech continues (its frames are over the gate: under it they score 0), at most SOUND_LEAD_MAX_MS earlier.
   */
  private soundOnset(onsetMs: number): number {
    const from = this.soundFromMs;
    return Number.isNaN(from) || from >= onsetMs ? onsetMs : Math.max(from, onsetMs - SOUND_LEAD_MAX_MS);
  }

  private report(ev: TurnDetectorEvent | null): void {
    if (ev?.type === 'start')
      this.emit({ kind: 'speech-start', atMs: ev.onsetMs, soundOnsetMs: this.soundOnset(ev.onsetMs) });
    else if (ev?.type === 'resume') this.emit({ kind: 'speech-resume', atMs: ev.atMs });
    else if (ev?.type === 'pause') this.emit({ kind: 'speech-pause', atMs: ev.atMs, lastSpeechMs: ev.lastSpeechMs });
    else if (ev?.type === 'end') this.emit({ kind: 'speech-end', atMs: ev.atMs, lastSpeechMs: ev.lastSpeechMs });
  }
}
