import { Resampler } from '../../../shared/kernel/audio/resampler.ts';
import type { SttStream } from '../../../shared/engines/stt/types.ts';
import type { Frame } from '../pipeline/frames.ts';
import { VadStage } from '../pipeline/vad-stage.ts';
import { completeness, STALE_MS } from './endpointing.ts';
import { isBackchannel, words } from './turn-detector.ts';
import { TurnEvidenceTracker } from './turn-evidence.ts';
import type { SessionInit } from './types.ts';

/** One stretch of caller speech, from onset to the user turn it becomes (or the noise it turns out to be). */
interface Utterance {
  onsetAudioMs: number;
  lastSpeechAudioMs: number | null;
  /** Audio time at which the endpointing silence had passed. */
  endpointAudioMs: number | null;
  endpointAt: number | null;
  /** The caller went quiet (before the endpoint) and has not spoken since. */
  paused: boolean;
  /** Opened by a final transcript for audio the VAD had not scored yet: the VAD decides where it ends. */
  sttAhead: boolean;
  duringAgent: boolean;
  interrupted: boolean;
  finals: string[];
  lastFinalEndMs: number;
  finalAt: number | null;
  timer: NodeJS.Timeout | null;
}

/** A finished utterance, on the session clock. */
export interface SpokenTurn {
  text: string;
  onsetAt: number;
  lastSpeechAt: number;
  /** When the final transcript came in (the endpoint, when none did). */
  finalAt: number;
  endpointAt: number;
  /** The designed endpointing silence (audio time). */
  endpointWaitMs: number;
  /** How late the endpoint was decided relative to the audio clock (processing lag). */
  vadLagMs: number;
}

/** What the caller side needs from the conversation around it. */
export interface CallerInputHost {
  now(): number;
  /** Agent audio is playing or a reply is being made. */
  agentActive(): boolean;
  /** The caller barged in; `onsetAt` is when their speech began (session clock). */
  interrupt(reason: 'speech' | 'long_speech', onsetAt: number): void;
  /** An utterance ended that was not a backchannel over the agent (its text may be empty). */
  spoke(turn: SpokenTurn): void;
  /** The caller went quiet after saying `text`: prepare the reply to it, unheard until the turn is confirmed. */
  prepare(text: string): void;
  /** The caller went on (or the transcript stopped reading as finished): drop the prepared reply. */
  unprepare(): void;
  fail(stage: 'vad' | 'stt', e: unknown): void;
}

/**
 * Silence after which the caller counts as quiet and a reply is prepared: two Silero frames, so that the gap
 * between two words (and the VAD's own flicker) does not start one.
 */
export const PREPARE_AFTER_MS = 60;
/**
 * After an utterance that reads as finished (final punctuation, a question), one Silero frame of silence is enough:
 * the reply is prepared ~30 ms sooner, and a caller who goes on drops it (rare after a closed sentence).
 */
export const PREPARE_AFTER_COMPLETE_MS = 30;

/**
 * The caller's side of a call: PCM → VAD + endpointing and STT (streaming, or one transcription per utterance for a
 * batch engine) → user turns, and the barge-in decisions over agent audio: speech that lasts `bargeInMinMs` and is
 * not a backchannel ("yeah", "ok") interrupts; so does any speech past `bargeInForceMs`.
 *
 * Endpointing adapts to what was said (see endpointing.ts): each transcript sets the silence window of the current
 * utterance. With preemptive replies on, a reply is prepared when the caller goes quiet after an utterance that
 * does not read as unfinished, and dropped when they go on.
 */
export class CallerInput {
  private readonly vad: VadStage;
  private stt: SttStream | null = null;
  private sttResampler: Resampler | null = null;
  private utt: Utterance | null = null;
  private partial = '';
  /** Batch STT: the utterance's audio, and the last ~300 ms before it (speech starts before the VAD says so). */
  private uttAudio: Buffer[] = [];
  private preroll: Buffer[] = [];
  private wallOffset = 0;
  private audioInMs = 0;
  private closed = false;
  sttAudioSeconds = 0;
  /** Issue 25: word timings vs the audio, this call's STT lag, end-of-utterance prosody (turn-evidence.ts). */
  private readonly evidence: TurnEvidenceTracker;
  /**
   * Caller audio received before the STT stream opened (the session starts while media already flows): the STT's
   * times count from its own first sample, so its word timings are this much behind the VAD's audio clock.
   */
  private sttOffsetMs = 0;

  constructor(
    private readonly s: SessionInit,
    private readonly host: CallerInputHost,
  ) {
    const { transport, engines, settings } = s;
    this.evidence = new TurnEvidenceTracker(transport.inRate, engines.stt.capabilities.streaming);
    this.vad = new VadStage(
      engines.vad,
      transport.inRate,
      {
        threshold: settings.vadThreshold,
        startMs: 60,
        endpointMs: settings.endpointing.fixedMs,
        pauseMs: settings.endpointing.preemptive ? PREPARE_AFTER_MS : 0,
      },
      (endMs) => this.onVadFrame(endMs),
    );
    this.vad.connect((f) => this.onVadEvent(f));
    this.vad.onError = (_n, e) => this.host.fail('vad', e);
  }

  /** Opens the provider's streaming STT when the engine streams (otherwise utterances are transcribed whole). */
  openStt(): void {
    const { engines, transport, agent } = this.s;
    if (!engines.stt.capabilities.streaming) return;
    const rates = engines.stt.capabilities.sampleRates;
    const rate = rates.includes(transport.inRate) || rates.length === 0 ? transport.inRate : rates[0]!;
    if (rate !== transport.inRate) this.sttResampler = new Resampler(transport.inRate, rate);
    this.sttOffsetMs = this.audioInMs;
    this.stt = engines.stt.stream({ sampleRate: rate, language: agent.language, apiKey: engines.sttKey?.key });
    void this.readStt(this.stt);
  }

  /** Session-clock time of an audio time: when that caller audio arrived. */
  wall(audioMs: number): number {
    return audioMs + this.wallOffset;
  }

  /** Caller PCM at the transport's inRate. */
  onAudio(pcm: Buffer): void {
    if (this.closed) return;
    const inRate = this.s.transport.inRate;
    const samples = pcm.length / 2;
    this.audioInMs += (samples / inRate) * 1000;
    this.wallOffset = this.host.now() - this.audioInMs;
    this.evidence.onAudio(pcm);
    if (this.stt) {
      this.stt.write(this.sttResampler ? this.sttResampler.processPcm(pcm) : pcm);
      this.sttAudioSeconds += samples / inRate;
    } else if (this.utt || this.vad.detector.inSpeech) {
      this.uttAudio.push(Buffer.from(pcm));
    } else {
      this.preroll.push(Buffer.from(pcm));
      if (this.preroll.length > 15) this.preroll.shift();
    }
    this.vad.push({ kind: 'audio-in', pcm, sampleRate: inRate, atMs: this.audioInMs });
  }

  /** Stops listening: no more turns, the STT stream ends. */
  close(reason: string): void {
    this.closed = true;
    if (this.utt?.timer) clearTimeout(this.utt.timer);
    this.vad.push({ kind: 'end', reason });
    try {
      this.stt?.end();
      this.stt?.close();
    } catch {
      // closing a stream that already failed
    }
  }

  private onVadEvent(f: Frame): void {
    if (f.kind === 'speech-start') {
      const open = this.utt;
      if (open) {
        // The caller goes on after a pause (or STT heard the speech before the VAD did): one utterance.
        if (open.paused) this.host.unprepare();
        open.paused = false;
        if (open.sttAhead) open.onsetAudioMs = Math.min(open.onsetAudioMs, f.atMs);
        open.sttAhead = false;
        if (open.timer) clearTimeout(open.timer);
        open.timer = null;
        open.endpointAt = null;
        open.endpointAudioMs = null;
        open.lastSpeechAudioMs = null;
      } else {
        if (!this.stt) this.uttAudio = [...this.preroll];
        this.utt = this.newUtterance(f.atMs);
        this.evidence.reset();
        this.vad.detector.setEndpointMs(this.s.settings.endpointing.fixedMs);
        if (this.s.settings.endpointing.preemptive) this.vad.detector.setPauseMs(PREPARE_AFTER_MS);
      }
      this.s.transport.event({ type: 'speech_started' });
    } else if (f.kind === 'speech-pause' && this.utt) {
      this.utt.paused = true;
      // The caller went quiet: the end of their speech can be heard now (prosody), so the window is decided again.
      this.transcriptChanged(this.partial === '');
    } else if (f.kind === 'speech-resume' && this.utt) {
      // The caller goes on after a pause: the reply prepared for what they had said no longer answers them.
      if (this.utt.paused) this.host.unprepare();
      this.utt.paused = false;
    } else if (f.kind === 'speech-end' && this.utt) {
      this.utt.lastSpeechAudioMs = f.lastSpeechMs;
      this.utt.endpointAudioMs = f.atMs;
      this.utt.endpointAt = this.host.now();
      if (!this.stt) void this.transcribeUtterance(this.utt);
      this.utt.timer = setTimeout(() => this.commit(true), this.s.settings.finalWaitMs);
      this.commit(false);
    }
  }

  private newUtterance(onsetAudioMs: number): Utterance {
    return {
      onsetAudioMs,
      lastSpeechAudioMs: null,
      endpointAudioMs: null,
      endpointAt: null,
      paused: false,
      sttAhead: false,
      duringAgent: this.host.agentActive(),
      interrupted: false,
      finals: [],
      lastFinalEndMs: 0,
      finalAt: null,
      timer: null,
    };
  }

  private interrupt(reason: 'speech' | 'long_speech', u: Utterance): void {
    u.interrupted = true;
    this.host.interrupt(reason, this.wall(u.onsetAudioMs));
  }

  private sttOnlyEndpoint(u: Utterance, endMs: number): void {
    u.sttAhead = false;
    u.endpointAudioMs = endMs;
    u.endpointAt = this.host.now();
    u.timer = setTimeout(() => this.commit(true), this.s.settings.finalWaitMs);
  }

  private onVadFrame(endMs: number): void {
    const ahead = this.utt;
    if (
      ahead?.sttAhead &&
      !this.vad.detector.inSpeech &&
      endMs >= ahead.lastFinalEndMs + this.vad.detector.currentEndpointMs
    ) {
      // The STT heard speech the (lagging) VAD never took for speech, and the VAD has now passed it in silence.
      this.sttOnlyEndpoint(ahead, ahead.lastFinalEndMs);
      this.commit(false);
      return;
    }
    const u = this.utt;
    if (!u || u.interrupted || !u.duringAgent || u.endpointAt !== null) return;
    if (!this.host.agentActive()) return;
    const dur = endMs - u.onsetAudioMs;
    const text = [...u.finals, this.partial].join(' ').trim();
    const { bargeInMinMs, bargeInForceMs } = this.s.settings;
    if (dur >= bargeInMinMs && text && !isBackchannel(text)) this.interrupt('speech', u);
    else if (dur >= bargeInForceMs && !(text && isBackchannel(text))) this.interrupt('long_speech', u);
  }

  private async readStt(stream: SttStream): Promise<void> {
    try {
      for await (const ev of stream.events) {
        if (ev.type === 'partial') {
          const endMs = ev.end === undefined ? undefined : ev.end * 1000 + this.sttOffsetMs;
          this.heardNewWords(ev.text, endMs);
          this.evidence.onPartial(endMs);
          this.partial = ev.text;
          // STT heard speech over the agent before the VAD (which may lag under load) did: open the utterance.
          // Two words at least, so that a noise the STT mistakes for a word does not cut the agent off.
          if (!this.utt && this.host.agentActive() && words(ev.text).length >= 2 && !isBackchannel(ev.text)) {
            this.utt = this.newUtterance(Math.max(0, this.audioInMs - this.s.settings.bargeInMinMs));
          }
          this.s.transport.event({ type: 'transcript', final: false, text: ev.text });
          this.transcriptChanged(false);
        } else {
          this.partial = '';
          this.evidence.onFinal(ev.end * 1000 + this.sttOffsetMs, this.audioInMs);
          if (this.utt && this.utt.endpointAt === null)
            this.vad.detector.speechEndedAt(ev.end * 1000 + this.sttOffsetMs);
          this.onFinal(ev.text, ev.end * 1000 + this.sttOffsetMs);
          this.transcriptChanged(true);
        }
        if (this.utt && !this.utt.interrupted && this.utt.duringAgent && this.utt.endpointAt === null) {
          this.onVadFrame(this.audioInMs);
        }
      }
    } catch (e) {
      if (!this.closed) this.host.fail('stt', e);
    }
  }

  private onFinal(text: string, endMs: number): void {
    this.s.transport.event({ type: 'transcript', final: true, text });
    if (!this.utt) {
      // A final with no utterance open (the VAD missed the speech, or lags behind on a loaded machine): open one so
      // it is not lost. It ends like any other: when the VAD has heard the endpointing window of silence after it
      // (onVadFrame), the window set by what was said; if the caller goes on, the VAD's speech joins it.
      this.utt = this.newUtterance(Math.max(0, endMs - 500));
      this.utt.lastSpeechAudioMs = endMs;
      this.utt.sttAhead = true;
    }
    if (text.trim()) this.utt.finals.push(text.trim());
    this.utt.lastFinalEndMs = Math.max(this.utt.lastFinalEndMs, endMs);
    this.utt.finalAt = this.host.now();
    const u = this.utt;
    const heard = u.finals.join(' ');
    if (u.duringAgent && !u.interrupted && this.host.agentActive() && heard && !isBackchannel(heard))
      this.interrupt('speech', u);
    this.commit(false);
  }

  /**
   * New words whose timings end after the VAD's last speech frame: the caller is talking although the VAD scored
   * silence (a soft onset like "T…uesday" after a pause, a quiet word). The silence window restarts there, so a
   * pause the model misjudged does not end the turn mid-sentence.
   */
  private heardNewWords(text: string, endMs: number | undefined): void {
    const u = this.utt;
    if (endMs === undefined || !u || u.endpointAt !== null) return;
    // The same words, timed later (a lagging STT caught up): where the speech ended, not new speech (issue 25).
    if (words(text).length <= words(this.partial).length) return this.vad.detector.speechEndedAt(endMs);
    this.vad.heardSpeechUntil(endMs);
  }

  /** What the caller said so far in the open utterance. */
  private heardSoFar(): string {
    return [...(this.utt?.finals ?? []), this.partial].join(' ').trim();
  }

  /** A transcript came in: the endpointing window follows it, and a prepared reply follows the words. */
  private transcriptChanged(final: boolean): void {
    const u = this.utt;
    if (!u || u.endpointAt !== null) return;
    const text = this.heardSoFar();
    const d = this.vad.detector;
    const ms = this.evidence.decide(this.s.settings.endpointing, { text, final }, d.lastSpeechMs, u.paused).windowMs;
    // An interim transcript can be ahead of the VAD (new words of speech the VAD has not scored yet): it may
    // lengthen the window, never shorten it; finals may do both.
    d.setEndpointMs(final ? ms : Math.max(ms, d.currentEndpointMs));
    if (this.s.settings.endpointing.preemptive) {
      d.setPauseMs(completeness(text) === 'complete' ? PREPARE_AFTER_COMPLETE_MS : PREPARE_AFTER_MS);
    }
    this.maybePrepare();
    this.vad.reconsider();
  }

  /** The caller is quiet: prepare a reply to what they said, unless it reads as unfinished or is over the agent. */
  private maybePrepare(): void {
    const u = this.utt;
    if (!this.s.settings.endpointing.preemptive || !this.stt || !u || !u.paused || u.endpointAt !== null) return;
    if (u.duringAgent) return;
    // Words that do not reach the end of the speech yet would prepare a reply to half a sentence: wait for them.
    if (this.evidence.uncoveredMs(this.vad.detector.lastSpeechMs) > STALE_MS) return;
    const text = this.heardSoFar();
    if (text && completeness(text) !== 'incomplete') this.host.prepare(text);
    else this.host.unprepare();
  }

  private async transcribeUtterance(u: Utterance): Promise<void> {
    const pcm = Buffer.concat(this.uttAudio);
    this.uttAudio = [];
    this.sttAudioSeconds += pcm.length / 2 / this.s.transport.inRate;
    try {
      const r = await this.s.engines.stt.transcribe({
        pcm,
        sampleRate: this.s.transport.inRate,
        language: this.s.agent.language,
        mode: 'fast',
        timestamps: 'segment',
        diarize: false,
        apiKey: this.s.engines.sttKey?.key,
      });
      if (this.utt !== u) return;
      this.onFinal(r.text, u.lastSpeechAudioMs ?? this.audioInMs);
    } catch (e) {
      this.s.log.warn({ sessionId: this.s.sessionId, err: (e as Error).message }, 'utterance transcription failed');
      if (this.utt === u) this.commit(true);
    }
  }

  /**
   * The final came after the endpoint (a lagging STT) and its words say the caller is not done ("…because"): the
   * endpoint was decided on words that missed the end. The utterance goes on, as if the endpoint had not been
   * reached, until the window its words ask for has passed in silence (or the caller speaks again). True if so.
   */
  private reopenIfUnfinished(u: Utterance): boolean {
    if (u.duringAgent || u.sttAhead || u.lastSpeechAudioMs === null) return false;
    const text = u.finals.join(' ');
    const d = this.vad.detector;
    const { windowMs } = this.evidence.decide(
      this.s.settings.endpointing,
      { text, final: true },
      u.lastSpeechAudioMs,
      true,
    );
    if (!d.reopen(u.onsetAudioMs, u.lastSpeechAudioMs, windowMs)) return false;
    if (u.timer) clearTimeout(u.timer);
    u.timer = null;
    u.endpointAt = null;
    u.endpointAudioMs = null;
    u.lastSpeechAudioMs = null;
    u.paused = true;
    this.maybePrepare();
    this.vad.reconsider();
    return true;
  }

  /** Hands the utterance on once it ended and its final transcript is in (or the wait is over). */
  private commit(force: boolean): void {
    const u = this.utt;
    if (!u || u.endpointAt === null || u.lastSpeechAudioMs === null) return;
    const covered = u.finalAt !== null && u.lastFinalEndMs >= u.lastSpeechAudioMs - 250;
    if (!covered && !force) return;
    if (!force && this.reopenIfUnfinished(u)) return;
    if (u.timer) clearTimeout(u.timer);
    this.utt = null;
    const text = [...u.finals, force ? this.partial : ''].join(' ').trim();
    this.partial = '';
    if (u.duringAgent && !u.interrupted) return; // a backchannel or a noise over the agent: not a turn
    const endpointAudioMs = u.endpointAudioMs ?? u.lastSpeechAudioMs;
    this.host.spoke({
      text,
      onsetAt: this.wall(u.onsetAudioMs),
      lastSpeechAt: this.wall(u.lastSpeechAudioMs),
      finalAt: u.finalAt ?? this.host.now(),
      endpointAt: u.endpointAt,
      endpointWaitMs: (u.endpointAudioMs ?? 0) - u.lastSpeechAudioMs,
      vadLagMs: u.endpointAt - this.wall(endpointAudioMs),
    });
  }
}
