import { Resampler } from '../../../../shared/kernel/audio/resampler.ts';
import { pcmToInt16, rms16, SILENCE_RMS } from '../../../../shared/kernel/audio/pcm.ts';
import type { VadEngine, VadSession } from '../../../../shared/engines/vad/types.ts';
import { TurnDetector, type TurnDetectorEvent, type TurnDetectorOptions } from './turn-detector.ts';
import { isSystemFrame, type DataFrame, type Frame, type UpstreamFrame } from '../frames.ts';
import { Stage } from '../stage.ts';

/** Queued 20 ms input frames beyond which the VAD sheds work (100 ms behind real time). */
const BACKLOG_SHED = 5;

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

  private readonly vad: VadEngine;

  constructor(vad: VadEngine, inRate: number, opts: TurnDetectorOptions) {
    // Scoring is queued (the model is async) but never cancelled: an interruption does not concern the caller's audio.
    super('vad', { cancellable: false });
    // A model that reads the line's rate natively (Silero at 8 kHz for phone calls) saves resampling every frame.
    this.vad = vad = vad.atRate?.(inRate) ?? vad;
    this.session = vad.session();
    this.resampler = new Resampler(inRate, vad.sampleRate);
    this.detector = new TurnDetector(opts);
    this.frameMs = (vad.frameSamples / vad.sampleRate) * 1000;
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
      // Near-silent frames (below -56 dBFS) are not speech: skip the model, which is most of the CPU of a call.
      let prob: number;
      if (rms16(frame) < SILENCE_RMS) prob = 0;
      else if (this.backlog > BACKLOG_SHED && this.shed++ % (this.backlog > 2 * BACKLOG_SHED ? 4 : 2) !== 0) {
        // Load shedding: the stage lags real time, so score only every 2nd (or 4th) frame and reuse the last score.
        prob = this.lastProb;
      } else {
        // The model gets its own copy: the buffer is reused for the next chunk.
        prob = await this.session.push(frame.slice());
      }
      this.lastProb = prob;
      const at = this.audioMs;
      this.audioMs += this.frameMs;
      this.report(this.detector.push(prob, at, this.frameMs));
      this.emit({ kind: 'vad-frame', endMs: this.audioMs, lastSpeechMs: this.detector.lastSpeechMs });
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
   * A phone line between words carries (near-)digital silence: when the samples that do not fill a frame yet are
   * silent too, the endpoint is decided now rather than when the frame completes.
   */
  private checkSilentTail(): void {
    if (!this.detector.inSpeech) return;
    const tail = this.buf.subarray(0, this.bufLen);
    if (tail.length > 0 && rms16(tail) >= SILENCE_RMS) return;
    this.report(this.detector.silentUntil(this.audioMs + (tail.length / this.vad.sampleRate) * 1000));
  }

  private report(ev: TurnDetectorEvent | null): void {
    if (ev?.type === 'start') this.emit({ kind: 'speech-start', atMs: ev.onsetMs });
    else if (ev?.type === 'resume') this.emit({ kind: 'speech-resume', atMs: ev.atMs });
    else if (ev?.type === 'pause') this.emit({ kind: 'speech-pause', atMs: ev.atMs, lastSpeechMs: ev.lastSpeechMs });
    else if (ev?.type === 'end') this.emit({ kind: 'speech-end', atMs: ev.atMs, lastSpeechMs: ev.lastSpeechMs });
  }
}
