import { DtmfCollector } from './dtmf.ts';
import { isListening, words } from '../words.ts';
import type { Conversation } from '../conversation.ts';
import type { DataFrame, SystemFrame } from '../frames.ts';
import type { EndpointingPolicy } from './endpointing.ts';
import { Stage } from '../stage.ts';
import { PREPARE_AFTER_MS } from './evidence-turn-detector.ts';
import type { InterruptionDetector, SpeechOverAgent } from './interruption.ts';
import { interruptionDetector } from './interruption-registry.ts';
import { LineLevels } from './line-levels.ts';
import type { TurnDetector } from './turn-detector.ts';
import { turnDetector } from './turn-detector-registry.ts';

/** One stretch of caller speech, from onset to the user turn it becomes (or the noise it turns out to be). */
interface Utterance {
  onsetAudioMs: number;
  /** Where the sound the VAD's speech continues from rose over the line's floor (≤ onsetAudioMs; vad-stage.ts). */
  soundOnsetAudioMs: number;
  lastSpeechAudioMs: number | null;
  endpointAudioMs: number | null;
  endpointAt: number | null;
  /** The caller went quiet (speech-pause) and has not spoken since. */
  paused: boolean;
  /** Opened by the STT before the VAD heard speech; the VAD's onset, when it comes, is taken if earlier. */
  sttAhead: boolean;
  /** The VAD's speech began within the turn handed on before it (scored late): its onset is that turn's end. */
  fromEndedTurn: boolean;
  duringAgent: boolean;
  /**
   * Began over the agent, did not stop it, and went on after the agent had stopped: from then on the caller's own
   * (a turn, unless it has no words or only a backchannel, like speech over the agent).
   */
  outlivedAgent: boolean;
  interrupted: boolean;
  /** The agent was stopped tentatively (speech past forceMs, no words yet): it resumes unless words come. */
  held: boolean;
  finals: string[];
  lastFinalEndMs: number;
  finalAt: number | null;
  /** The recogniser's decoded audio time when its progress was last looked at in the wait for a final. */
  decodedSeenMs: number | null;
  /** The engine of the last final, when the call's STT can fall back. */
  sttEngine?: string;
  timer: NodeJS.Timeout | null;
  /** The most the speech has stood above the line before it since it began (dB; line-levels.ts); null until known. */
  contrastDb: number | null;
  /** The least it has been under the caller's own speech level since it began (dB); null until known. */
  underCallerDb: number | null;
}

/**
 * The wait for a final from a recogniser that reports its progress (stt-progress: the local one), past the engine's
 * own wait: looked at again every PROGRESS_CHECK_MS while it is still decoding toward the endpoint and has moved
 * since the last look, and never longer than FINAL_WAIT_CEILING_MS from the endpoint in all (a worker that hangs
 * cannot hold a turn). A starved recogniser decodes 100 ms of audio (its progress step) in well under 2 s.
 */
export const PROGRESS_CHECK_MS = 2000;
export const FINAL_WAIT_CEILING_MS = 20_000;
/**
 * Decoded this far past the endpoint (audio ms) with no final and an utterance still open: the recogniser hears
 * something the VAD does not (line noise, a soft tail); the turn goes on at the engine's own wait, as before.
 */
const DECODED_PAST_ENDPOINT_MS = 1000;
/** The caller's own voice: the loud frames (75th percentile) of this much of their speech before their last word. */
const CALLER_SPAN_MS = 1500;
/**
 * Speech after the caller's words this far (dB) or more under their voice is not theirs when the STT found no words
 * in it (`endUnderVoiceBehind`): a crowd 10 dB under the caller reads about 11 dB under their loud frames (6–22 dB
 * where bench:robustness babble ended turns on it); a caller going on after a pause, within a few dB of them.
 */
const BEHIND_CALLER_DB = 6;

/** The call's turn-taking settings this stage reads (call/types.ts's SessionSettings holds them among the rest). */
export interface TurnSettings {
  /** Endpointing windows and preemptive replies (the agent's turnTaking over the env defaults). */
  endpointing: EndpointingPolicy;
  bargeInMinMs: number;
  bargeInForceMs: number;
  /** How long after the endpoint to wait for a final transcript before using what there is. */
  finalWaitMs: number;
  /**
   * The wait for a final from an engine the call's STT falls back to, by provider, where it differs from the call's
   * own engine's: the local recogniser's finals come late on a busy CPU, and the vendor's short wait would hand its
   * turns on as a partial.
   */
  finalWaitMsBy?: Record<string, number>;
}

export interface TurnStageOptions {
  settings: TurnSettings;
  inRate: number;
  /** The STT streams (partials, finals as the caller speaks) rather than transcribing each utterance at its end. */
  streaming: boolean;
  /** The agent's turn detector (turn/turn-detector.ts); the platform's `default` when absent. */
  detector?: TurnDetector;
  /** The STT engine hearing the caller now (a fallback once the call's own has failed); the call's own when absent. */
  sttEngine?: () => string;
  /** The agent's interruption detector (turn/interruption.ts); the platform's `default` when absent. */
  interruption?: InterruptionDetector;
}

/**
 * The turn decision: the VAD's speech events and the STT's transcripts → utterances (`utterance` frames: a user
 * turn, or the noise it turns out to be), keypad entries, and the barge-in decisions over agent audio (`interrupt`):
 * the interruption detector (turn/interruption.ts; by default, speech that lasts `bargeInMinMs` and is not a
 * backchannel such as "yeah", or any speech past `bargeInForceMs`) decides; a key pressed while the agent speaks
 * interrupts too.
 *
 * The turn detector (turn/turn-detector.ts; by default, endpointing that adapts to what was said: endpointing.ts)
 * sets the silence window of the current utterance from each transcript, sent upstream to the VAD. With preemptive replies on, a reply is prepared (`prepare`) when the caller
 * goes quiet after an utterance that does not read as unfinished, and dropped (`unprepare`) when they go on.
 */
export class TurnStage extends Stage {
  private utt: Utterance | null = null;
  private partial = '';
  private wallOffset = 0;
  private audioInMs = 0;
  /** The VAD's current endpointing window (this stage sets it). */
  private endpointMs: number;
  private inSpeech = false;
  /**
   * The audio time at which the window is decided again while the caller is quiet (the detector's `recheckAtMs`:
   * words that were behind the speech will have caught up, or proved there were none), or null.
   */
  private recheckAtMs: number | null = null;
  /** The VAD's end of the caller's speech so far (vad-frame, pause, end), moved by what this stage sent upstream. */
  private lastSpeechMs = 0;
  /** Decides the end of the turn (by default: word timings, STT lag, prosody; turn/evidence-turn-detector.ts). */
  private readonly detector: TurnDetector;
  /** Decides whether caller speech over the agent is a barge-in (turn/interruption.ts). */
  private readonly interruption: InterruptionDetector;
  /** The line's level frame by frame (the VAD's), for how far speech over the agent stands above it. */
  private readonly levels = new LineLevels();
  private levelsHeard = false;
  /** Where the VAD's current run of speech frames began (audio ms), and where the silence before it last ended. */
  private runFromMs = 0;
  private quietAtMs: number | null = null;
  /** `afterWords`'s last answer, for the final whose words end at `endMs`. */
  private wordsWindow: { endMs: number; windowMs: number; callerDb: number | undefined } | null = null;
  private closed = false;
  /**
   * Where the last utterance handed on (or dropped) ended in the call's audio: the later of its endpoint and the end
   * of its final's words. The VAD lags the STT on a starved CPU (batched Silero behind a streaming STT): a turn its
   * final ended can be handed on, and its reply begun, before the VAD has scored all of the speech. That speech is
   * the turn's, not the caller speaking over the reply.
   */
  private endedAudioMs = Number.NEGATIVE_INFINITY;
  /** The recogniser's last progress (stt-progress), when the STT reports it; null for the vendors'. */
  private progress: { decodedMs: number; settledMs: number } | null = null;
  private readonly dtmf = new DtmfCollector((digits) => this.emit({ kind: 'keypad', digits, atMs: this.conv.now() }));

  constructor(
    private readonly conv: Pick<Conversation, 'now' | 'agentActive' | 'current' | 'answeredBy' | 'playback'>,
    private readonly opts: TurnStageOptions,
  ) {
    super('turns', { sync: true });
    this.endpointMs = opts.settings.endpointing.fixedMs;
    const { settings, inRate, streaming } = opts;
    this.detector = opts.detector ?? turnDetector({ policy: settings.endpointing, inRate, streaming });
    this.interruption =
      opts.interruption ??
      interruptionDetector({ bargeInMinMs: settings.bargeInMinMs, bargeInForceMs: settings.bargeInForceMs });
  }

  /** Session-clock time of an audio time: when that caller audio arrived. */
  private wall(audioMs: number): number {
    return audioMs + this.wallOffset;
  }

  protected override onData(frame: DataFrame): void {
    switch (frame.kind) {
      case 'audio-in':
        this.audioInMs += (frame.pcm.length / 2 / this.opts.inRate) * 1000;
        this.wallOffset = this.conv.now() - this.audioInMs;
        this.detector.onAudio(frame.pcm);
        return;
      case 'vad-frame':
        this.lastSpeechMs = frame.lastSpeechMs;
        // Where the VAD's current run of speech frames began (after a frame it scored as silence).
        if (frame.lastSpeechMs < frame.endMs) this.quietAtMs = frame.endMs;
        else if (this.quietAtMs !== null) {
          this.runFromMs = this.quietAtMs;
          this.quietAtMs = null;
        }
        if (frame.levelDb !== undefined) {
          // The caller's own turn, or their barge-in, is not the line's background (line-levels.ts).
          const run = this.inSpeech ? (this.utt?.onsetAudioMs ?? -1) : null;
          const own = this.inSpeech && (this.utt?.duringAgent === false || this.utt?.interrupted === true);
          this.levels.push(frame.endMs, frame.levelDb, run, own);
          this.levelsHeard = true;
          this.endUnderVoiceBehind(frame.endMs);
        }
        // Ended and waiting for a final: one may not be needed, once the STT has had the speech for its lag.
        if (this.utt?.timer && this.utt.endpointAt !== null) this.commit(false);
        if (this.recheckAtMs !== null && frame.endMs >= this.recheckAtMs) {
          this.recheckAtMs = null;
          if (this.utt?.paused) this.transcriptChanged(this.partial === '');
        }
        return this.onVadFrame(frame.endMs);
      case 'speech-pause':
        this.lastSpeechMs = frame.lastSpeechMs;
        if (this.utt) {
          this.utt.paused = true;
          // The caller went quiet: the end of their speech can be heard now (prosody), so the window is decided again.
          this.transcriptChanged(this.partial === '');
        }
        return;
      case 'speech-reopened':
        return this.onReopened(frame.lastSpeechMs);
      case 'speech-resume':
        // The caller goes on after a pause: the reply prepared for what they had said no longer answers them.
        if (this.utt) {
          if (this.utt.paused) this.emit({ kind: 'unprepare' });
          this.utt.paused = false;
        }
        return;
      case 'speech-end':
        this.inSpeech = false;
        this.lastSpeechMs = frame.lastSpeechMs;
        return this.onSpeechEnd(frame.atMs, frame.lastSpeechMs);
      default:
        this.emit(frame);
    }
  }

  protected override onSystem(frame: SystemFrame): boolean | void {
    switch (frame.kind) {
      case 'speech-start':
        this.inSpeech = true;
        this.onSpeechStart(frame.atMs, frame.soundOnsetMs ?? frame.atMs);
        return;
      case 'transcript':
        this.onTranscript(frame);
        return false;
      case 'stt-progress':
        this.onProgress(frame.decodedMs, frame.settledMs);
        return false;
      case 'dtmf':
        this.emit(frame);
        if (this.conv.agentActive && this.conv.current) this.interrupt('dtmf', null);
        this.dtmf.push(frame.digit);
        return false;
      case 'end':
        this.closed = true;
        this.dtmf.cancel();
        if (this.utt?.timer) clearTimeout(this.utt.timer);
        return;
    }
  }

  private setWindow(endpointMs: number, pauseMs: number | undefined, reconsider: boolean): void {
    this.endpointMs = endpointMs;
    this.emitUp({ kind: 'endpoint-window', endpointMs, pauseMs, reconsider });
  }

  private onSpeechStart(vadOnsetMs: number, vadSoundOnsetMs: number): void {
    // Speech the VAD scored late that began before the last turn ended: only what goes on past that end is new
    // (endedAudioMs). Speech that begins after that end is timed from its own onset, as before.
    const atMs = Math.max(vadOnsetMs, this.endedAudioMs);
    const soundOnsetMs = Math.max(vadSoundOnsetMs, this.endedAudioMs);
    const open = this.utt;
    if (open) {
      // The caller goes on after a pause (or STT heard the speech before the VAD did): one utterance.
      if (open.paused) this.emit({ kind: 'unprepare' });
      open.paused = false;
      if (open.sttAhead) {
        open.onsetAudioMs = Math.min(open.onsetAudioMs, atMs);
        open.soundOnsetAudioMs = Math.min(open.soundOnsetAudioMs, soundOnsetMs);
      }
      open.sttAhead = false;
      if (open.timer) clearTimeout(open.timer);
      open.timer = null;
      open.endpointAt = null;
      open.endpointAudioMs = null;
      open.lastSpeechAudioMs = null;
    } else {
      this.utt = this.newUtterance(atMs, soundOnsetMs);
      this.utt.fromEndedTurn = vadOnsetMs < this.endedAudioMs;
      this.detector.onUtteranceStart();
      const { endpointing } = this.opts.settings;
      this.setWindow(endpointing.fixedMs, endpointing.preemptive ? PREPARE_AFTER_MS : undefined, false);
    }
  }

  private onSpeechEnd(atMs: number, lastSpeechMs: number): void {
    const u = this.utt;
    if (!u) return;
    // The late-scored rest of the ended turn's speech, and no more than a tail past its end (shorter than any
    // barge-in, with no words of its own): not an utterance, whether or not the agent is still speaking.
    const pastEndMs = lastSpeechMs - u.onsetAudioMs;
    if (
      u.fromEndedTurn &&
      u.finals.length === 0 &&
      this.partial === '' &&
      pastEndMs < this.opts.settings.bargeInMinMs
    ) {
      this.utt = null;
      return;
    }
    u.lastSpeechAudioMs = lastSpeechMs;
    u.endpointAudioMs = atMs;
    u.endpointAt = this.conv.now();
    this.awaitFinal(u);
    this.commit(false);
  }

  /**
   * Waits for the utterance's final after its endpoint, then hands it on with what there is. When the call failed
   * over meanwhile to an engine with a longer wait (the local recogniser: its finals come late on a busy CPU), also
   * when the vendor's socket dropped as the caller stopped and the failover came after the endpoint, the rest of
   * that engine's wait is waited out. Otherwise this is one timer of the engine's wait: a re-check against the wall
   * clock would wait longer on a loaded event loop (a timer counts from the loop's time, which lags the clock inside
   * a long turn), and at 300 calls that cost turns and calls (bench:voice-latency, stop 33).
   */
  private awaitFinal(u: Utterance): void {
    const wait = this.finalWaitMs();
    u.decodedSeenMs = this.progress?.decodedMs ?? null;
    u.timer = setTimeout(() => {
      const longer = this.finalWaitMs() - wait;
      if (longer > 0) u.timer = setTimeout(() => this.finalWaitOver(u, wait + longer), longer);
      else this.finalWaitOver(u, wait);
    }, wait);
  }

  /**
   * The engine's wait for the final is over (`waitedMs` since the endpoint). A vendor's turn goes on now with what
   * there is. A recogniser that reports its progress and is still decoding toward the endpoint, behind the audio on
   * a starved CPU, gets more time while it moves (its final is late, not lost): issue 32, the local phone call's
   * flake. Only such a recogniser's turns take a second timer.
   */
  private finalWaitOver(u: Utterance, waitedMs: number): void {
    const p = this.progress;
    const endpointMs = u.endpointAudioMs;
    const decoding =
      p !== null &&
      endpointMs !== null &&
      p.decodedMs > (u.decodedSeenMs ?? -1) &&
      p.decodedMs < endpointMs + DECODED_PAST_ENDPOINT_MS &&
      waitedMs + PROGRESS_CHECK_MS <= FINAL_WAIT_CEILING_MS;
    if (!decoding || this.utt !== u) return this.commit(true);
    u.decodedSeenMs = p.decodedMs;
    u.timer = setTimeout(() => this.finalWaitOver(u, waitedMs + PROGRESS_CHECK_MS), PROGRESS_CHECK_MS);
  }

  /**
   * The recogniser's progress. Waiting for a final that it has settled past (every final up to the endpoint is out,
   * and none finished the utterance: it heard no words there), the turn goes on at once with what there is rather
   * than at the end of the wait.
   */
  private onProgress(decodedMs: number, settledMs: number): void {
    this.progress = { decodedMs, settledMs };
    const u = this.utt;
    if (u?.timer && u.endpointAudioMs !== null && settledMs >= u.endpointAudioMs) this.commit(true);
  }

  /** The wait for a final of the engine hearing the caller now. */
  private finalWaitMs(): number {
    const { finalWaitMs, finalWaitMsBy } = this.opts.settings;
    const engine = this.opts.sttEngine?.();
    return (engine !== undefined ? finalWaitMsBy?.[engine] : undefined) ?? finalWaitMs;
  }

  private newUtterance(onsetAudioMs: number, soundOnsetAudioMs = onsetAudioMs): Utterance {
    return {
      onsetAudioMs,
      soundOnsetAudioMs,
      lastSpeechAudioMs: null,
      endpointAudioMs: null,
      endpointAt: null,
      paused: false,
      sttAhead: false,
      fromEndedTurn: false,
      duringAgent: this.conv.agentActive,
      outlivedAgent: false,
      interrupted: false,
      held: false,
      finals: [],
      lastFinalEndMs: 0,
      finalAt: null,
      decodedSeenMs: null,
      timer: null,
      contrastDb: null,
      underCallerDb: null,
    };
  }

  private interrupt(reason: 'speech' | 'long_speech' | 'dtmf', u: Utterance | null): void {
    if (u) {
      u.interrupted = true;
      this.levels.callerSpoke(u.onsetAudioMs);
    }
    // An answering machine does not barge in: its greeting has ended before the message starts.
    if (this.conv.answeredBy === 'machine') return;
    // When the caller began (the sound's onset): what they had heard of the agent by then, and the decision's delay.
    const onsetAt = u ? this.wall(u.soundOnsetAudioMs) : null;
    this.emit({ kind: 'interrupt', atMs: this.conv.now(), reason, onsetAt, flush: true });
  }

  private sttOnlyEndpoint(u: Utterance, endMs: number): void {
    u.sttAhead = false;
    u.endpointAudioMs = endMs;
    u.endpointAt = this.conv.now();
    this.awaitFinal(u);
  }

  private onVadFrame(endMs: number): void {
    const ahead = this.utt;
    if (ahead?.sttAhead && !this.inSpeech && endMs >= ahead.lastFinalEndMs + this.endpointMs) {
      // The STT heard speech the (lagging) VAD never took for speech, and the VAD has now passed it in silence.
      this.sttOnlyEndpoint(ahead, ahead.lastFinalEndMs);
      this.commit(false);
      return;
    }
    const u = this.utt;
    if (!u || u.interrupted || !u.duringAgent || u.endpointAt !== null) return;
    if (!this.conv.agentActive) {
      // The agent finished while this speech went on (a caller answering over its last words; a crowd on the line
      // that the VAD hears as one run from the agent's reply into the caller's turn): what follows is the caller's.
      // Not while the agent is only held for it (hold-playback): that speech is still deciding whether it barges in.
      if (!u.held) {
        u.duringAgent = false;
        u.outlivedAgent = true;
      }
      return;
    }
    const verdict = this.interruption.decide({
      phase: this.agentPhase(),
      speechMs: endMs - u.onsetAudioMs,
      soundMs: endMs - u.soundOnsetAudioMs,
      text: this.heardSoFar(),
      final: false,
      ...this.levelsOf(u),
    });
    if (verdict === 'backchannel') this.levels.callerSpoke(u.onsetAudioMs);
    if (verdict === 'speech') this.interrupt(verdict, u);
    else if (verdict === 'long_speech') {
      if (this.interruption.resumesFalseStarts) this.hold(u);
      else this.interrupt(verdict, u);
    }
  }

  /**
   * Speech long enough to stop the agent, with no words yet (the STT lags, or it is not speech): the agent stops now,
   * as a barge-in would, but tentatively. Words that make it one (`speech`) interrupt; if it ends with none, or only
   * a backchannel or a hum, the agent resumes where it stopped (commit). A barge-in is never later than it would be
   * without the words; a cough or a hum no longer costs the reply.
   */
  private hold(u: Utterance): void {
    if (u.held) return;
    if (this.conv.answeredBy === 'machine') return;
    u.held = true;
    this.emit({ kind: 'hold-playback', atMs: this.conv.now(), onsetAt: this.wall(u.soundOnsetAudioMs) });
  }

  /**
   * The utterance's levels for the interruption detector, now included (a word's peak counts after the word: its
   * transcript comes later): the most its speech has stood above the line before it (`contrastDb` only when the
   * line carries voices besides it), and the least it has been under the caller's own speech; none when the VAD
   * reports no levels.
   */
  private levelsOf(u: Utterance): Pick<SpeechOverAgent, 'contrastDb' | 'lineContrastDb' | 'underCallerDb'> {
    if (!this.levelsHeard) return {};
    const now = this.levels.contrastDb();
    if (now !== undefined && (u.contrastDb === null || now > u.contrastDb)) u.contrastDb = now;
    const under = this.levels.underCallerDb();
    if (under !== undefined && (u.underCallerDb === null || under < u.underCallerDb)) u.underCallerDb = under;
    return {
      contrastDb: this.levels.carriesVoices() ? u.contrastDb : null,
      lineContrastDb: u.contrastDb,
      underCallerDb: u.underCallerDb,
    };
  }

  /** The agent's audio is playing, or its reply is still being made. */
  private agentPhase(): 'speaking' | 'thinking' {
    return this.conv.playback.speaking ? 'speaking' : 'thinking';
  }

  private onTranscript(f: Extract<SystemFrame, { kind: 'transcript' }>): void {
    if (this.closed) return;
    if (f.batchOnsetMs !== undefined) {
      // A batch transcription of speech that began at batchOnsetMs: for the open utterance, unless the turn it was
      // made for has already been handed on (its wait ran out) and a later one is open.
      const u = this.utt;
      if (!u || u.onsetAudioMs > f.batchOnsetMs) return;
      if (f.failed) return this.commit(true);
      this.emit(f);
      return this.onFinal(f.text, u.lastSpeechAudioMs ?? this.audioInMs);
    }
    if (!f.final) {
      this.heardNewWords(f.text, f.endMs);
      this.detector.onPartial(f.endMs);
      this.partial = f.text;
      // STT heard speech over the agent before the VAD (which may lag under load) did: open the utterance.
      // Two words at least, so that a noise the STT mistakes for a word does not cut the agent off.
      if (!this.utt && this.conv.agentActive && words(f.text).length >= 2 && !isListening(f.text)) {
        this.utt = this.newUtterance(Math.max(0, this.audioInMs - this.opts.settings.bargeInMinMs));
      }
      this.emit(f);
      this.transcriptChanged(false);
    } else {
      this.partial = '';
      this.emit(f);
      const endMs = f.endMs ?? this.audioInMs;
      this.detector.onFinal(endMs, this.audioInMs);
      if (this.utt && this.utt.endpointAt === null) this.speechEndedAt(endMs);
      this.onFinal(f.text, endMs, f.engine);
      this.transcriptChanged(true);
    }
    if (this.utt && !this.utt.interrupted && this.utt.duringAgent && this.utt.endpointAt === null) {
      this.onVadFrame(this.audioInMs);
    }
  }

  private onFinal(text: string, endMs: number, engine?: string): void {
    if (!this.utt) {
      // A final with no utterance open (the VAD missed the speech, or lags behind on a loaded machine): open one so
      // it is not lost. It ends like any other: when the VAD has heard the endpointing window of silence after it
      // (onVadFrame), the window set by what was said; if the caller goes on, the VAD's speech joins it.
      this.utt = this.newUtterance(Math.max(0, endMs - 500));
      this.utt.lastSpeechAudioMs = endMs;
      this.utt.sttAhead = true;
    }
    if (text.trim()) this.utt.finals.push(text.trim());
    if (engine) this.utt.sttEngine = engine;
    this.utt.lastFinalEndMs = Math.max(this.utt.lastFinalEndMs, endMs);
    this.utt.finalAt = this.conv.now();
    const u = this.utt;
    if (u.duringAgent && !u.interrupted && this.conv.agentActive) {
      const speechMs = Math.max(0, endMs - u.onsetAudioMs);
      const heard = {
        phase: this.agentPhase(),
        speechMs,
        text: u.finals.join(' '),
        final: true,
        ...this.levelsOf(u),
      };
      const verdict = this.interruption.decide(heard);
      if (verdict === 'speech') this.interrupt('speech', u);
      else if (verdict === 'backchannel') this.levels.callerSpoke(u.onsetAudioMs);
    }
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
    if (words(text).length <= words(this.partial).length) return this.speechEndedAt(endMs);
    if (this.inSpeech) this.lastSpeechMs = Math.max(this.lastSpeechMs, endMs);
    this.emitUp({ kind: 'heard-speech', untilMs: endMs });
  }

  /** The caller's speech ended at `atMs` (audio), later than the VAD scored: the VAD measures the silence from there. */
  private speechEndedAt(atMs: number): void {
    if (this.inSpeech) this.lastSpeechMs = Math.max(this.lastSpeechMs, atMs);
    this.emitUp({ kind: 'speech-ended-at', atMs });
  }

  /** What the caller said so far in the open utterance. */
  private heardSoFar(): string {
    return [...(this.utt?.finals ?? []), this.partial].join(' ').trim();
  }

  /** A transcript came in: the endpointing window follows it, and a prepared reply follows the words. */
  private transcriptChanged(final: boolean): void {
    const u = this.utt;
    if (!u || u.endpointAt !== null) return;
    const { endpointing } = this.opts.settings;
    const text = this.heardSoFar();
    const ms = this.detector.endpointWindowMs({ text, final }, this.lastSpeechMs, u.paused);
    this.recheckAtMs = u.paused ? this.detector.recheckAtMs(this.lastSpeechMs) : null;
    // An interim transcript can be ahead of the VAD (new words of speech the VAD has not scored yet): it may
    // lengthen the window, never shorten it; finals may do both.
    const endpointMs = final ? ms : Math.max(ms, this.endpointMs);
    const pauseMs = endpointing.preemptive ? this.detector.prepareAfterMs(text) : undefined;
    this.endpointMs = endpointMs;
    this.maybePrepare();
    this.setWindow(endpointMs, pauseMs, true);
  }

  /** The caller is quiet: prepare a reply to what they said, unless it reads as unfinished or is over the agent. */
  private maybePrepare(): void {
    const u = this.utt;
    if (!this.opts.settings.endpointing.preemptive || !this.opts.streaming || !u || !u.paused) return;
    if (u.endpointAt !== null || u.duringAgent) return;
    const text = this.heardSoFar();
    const verdict = this.detector.prepareVerdict(text, this.lastSpeechMs);
    if (verdict === 'prepare') this.emit({ kind: 'prepare', text });
    else if (verdict === 'unprepare') this.emit({ kind: 'unprepare' });
  }

  /**
   * The final came after the endpoint (a lagging STT) and its words say the caller is not done ("…because"): the
   * endpoint was decided on words that missed the end. The VAD is asked to take the endpoint back (`reopen`
   * upstream); when it can, it answers `speech-reopened` at once and the utterance goes on until the window its
   * words ask for has passed in silence (or the caller speaks again). True if the utterance is no longer to commit.
   */
  private reopenIfUnfinished(u: Utterance): boolean {
    if (u.duringAgent || u.sttAhead || u.lastSpeechAudioMs === null) return false;
    const text = u.finals.join(' ');
    const windowMs = this.detector.endpointWindowMs({ text, final: true }, u.lastSpeechAudioMs, true);
    this.emitUp({ kind: 'reopen', onsetMs: u.onsetAudioMs, lastSpeechMs: u.lastSpeechAudioMs, endpointMs: windowMs });
    if (u.endpointAt !== null && this.utt === u) return false; // the VAD had heard that much silence already
    if (this.utt === u) this.endpointMs = windowMs;
    // Reopened (or, reopened and ended again at once by the silence already heard: handled within the call).
    return true;
  }

  /** The VAD took the endpoint back: the utterance is open again, quiet since `lastSpeechMs`. */
  private onReopened(lastSpeechMs: number): void {
    this.inSpeech = true;
    this.lastSpeechMs = lastSpeechMs;
    const u = this.utt;
    if (!u) return;
    if (u.timer) clearTimeout(u.timer);
    u.timer = null;
    u.endpointAt = null;
    u.endpointAudioMs = null;
    u.lastSpeechAudioMs = null;
    u.paused = true;
    this.maybePrepare();
  }

  /**
   * A turn whose words are all in (finals, no interim after them) while the VAD is still in speech after them: when
   * the STT has had the window those words ask for after them (plus its lag) and sent no words, and what the VAD
   * hears there is well under the caller's own voice, that speech is a crowd or a voice behind the caller (the VAD
   * scores background voices as speech at every level) and the caller is done: the VAD is told to end the utterance
   * where the words end (`end-speech`). Without this a crowd that never leaves the window's silence holds the turn
   * open past any reply (bench:robustness, babble 10–20 dB). Both are needed: a caller who goes on after a pause
   * speaks at their own level (their words come later than the window when the pause was short), and speech as
   * loud as the caller with no words yet may be words on their way.
   */
  private endUnderVoiceBehind(nowMs: number): void {
    const u = this.utt;
    if (!u || !this.inSpeech || u.endpointAt !== null || u.sttAhead || u.finals.length === 0) return;
    if ((u.duringAgent && !u.interrupted) || this.partial !== '') return;
    const wordsEndMs = u.lastFinalEndMs;
    if (this.lastSpeechMs <= wordsEndMs) return;
    // The speech judged: the VAD's run going on now, from where it began after the words (or from the words, when
    // the VAD heard no gap since them). The STT has had its beginning for its lag: a caller going on after a pause
    // would have sent words by then (and they decide: `partial`).
    const fromMs = Math.max(wordsEndMs, this.runFromMs);
    const { windowMs, callerDb: caller } = this.afterWords(u, wordsEndMs);
    if (!this.detector.heardPast(Math.max(wordsEndMs + windowMs, fromMs))) return;
    // That run's last 1.5 s at most (a crowd's level does not drift in that time; a caller going on is in `recent`).
    const after = this.levels.levelOver(Math.max(fromMs, nowMs - CALLER_SPAN_MS), nowMs, 75);
    const recent = this.levels.levelOver(nowMs - 320, nowMs, 75);
    if (caller === undefined || after === undefined || recent === undefined) return;
    if (caller - Math.max(after, recent) < BEHIND_CALLER_DB) return;
    this.emitUp({ kind: 'end-speech', lastSpeechMs: wordsEndMs });
  }

  /**
   * The window the turn's words ask for when the speech ends where they do, and the caller's own level before them
   * (decided once per final: the VAD has scored past the words when this is first asked).
   */
  private afterWords(u: Utterance, wordsEndMs: number): { windowMs: number; callerDb: number | undefined } {
    if (this.wordsWindow?.endMs !== wordsEndMs) {
      const text = u.finals.join(' ');
      this.wordsWindow = {
        endMs: wordsEndMs,
        windowMs: this.detector.endpointWindowMs({ text, final: true }, wordsEndMs, true),
        callerDb: this.levels.levelOver(wordsEndMs - CALLER_SPAN_MS, wordsEndMs, 75, 10),
      };
    }
    return this.wordsWindow;
  }

  /**
   * The speech after the last final's words, up to `lastSpeechMs`, brought no words: no interim is pending and the
   * STT has had that audio for its lag. A crowd or a voice behind the caller that the VAD scored as speech after
   * their last word: the final already in covers the turn, and waiting the engine's wait (1.2 s) for a final that
   * reaches that speech only lets the crowd's next run take the turn back (bench:robustness, babble).
   */
  private noWordsAfterFinal(lastSpeechMs: number): boolean {
    return this.partial === '' && this.detector.heardPast(lastSpeechMs);
  }

  /** Hands the utterance on once it ended and its final transcript is in (or the wait is over). */
  private commit(force: boolean): void {
    const u = this.utt;
    if (!u || u.endpointAt === null || u.lastSpeechAudioMs === null) return;
    const covered =
      u.finalAt !== null &&
      (u.lastFinalEndMs >= u.lastSpeechAudioMs - 250 || this.noWordsAfterFinal(u.lastSpeechAudioMs));
    if (!covered && !force) return;
    if (!force && this.reopenIfUnfinished(u)) return;
    if (u.timer) clearTimeout(u.timer);
    this.utt = null;
    // Never past the audio heard so far: a recogniser's timing that ran ahead of it would silence the caller.
    const endedMs = Math.min(this.audioInMs, Math.max(u.endpointAudioMs ?? u.lastSpeechAudioMs, u.lastFinalEndMs));
    this.endedAudioMs = Math.max(this.endedAudioMs, endedMs);
    const text = [...u.finals, force ? this.partial : ''].join(' ').trim();
    this.partial = '';
    // Held tentatively, and ended with words that are speech after all (the STT's final never came): a barge-in.
    if (u.held && !u.interrupted && text && !isListening(text)) this.interrupt('long_speech', u);
    if (u.duringAgent && !u.interrupted) {
      // A backchannel, a hum or a noise over the agent: not a turn; an agent stopped for it goes on.
      if (u.held && !this.closed) this.emit({ kind: 'resume-playback', atMs: this.conv.now() });
      return;
    }
    // Speech over the agent that outlived it with no words, or only "mm-hm": not a turn, as over the agent.
    if (u.outlivedAgent && !u.interrupted && (!text || isListening(text))) return;
    if (this.closed) return;
    const endpointAudioMs = u.endpointAudioMs ?? u.lastSpeechAudioMs;
    this.emit({
      kind: 'utterance',
      text,
      onsetAt: this.wall(u.onsetAudioMs),
      lastSpeechAt: this.wall(u.lastSpeechAudioMs),
      finalAt: u.finalAt ?? this.conv.now(),
      endpointAt: u.endpointAt,
      endpointWaitMs: (u.endpointAudioMs ?? 0) - u.lastSpeechAudioMs,
      vadLagMs: u.endpointAt - this.wall(endpointAudioMs),
      ...(u.sttEngine ? { sttEngine: u.sttEngine } : {}),
    });
  }
}
