import { BeepTracker, DEFAULT_BEEP, dominantTone, type BeepOptions } from './tone.ts';

/**
 * Answering-machine detection from the first seconds of the called party's audio, with no vendor: a person
 * answers with a short greeting ("Hello?", "Hi, this is Sam") and then waits for the caller, a machine plays a
 * long greeting without a turn-taking pause, often ended by a beep. Self-contained (frames in, events out) so it
 * runs as a stage over the caller's audio frames and in the benchmark unchanged.
 *
 * Two phases: *detect* decides `human | machine | unknown`; after `machine` it goes on to find the end of the
 * greeting (the beep, else a long silence, else a time limit): the moment to start a voicemail message.
 */
export type AnsweredBy = 'human' | 'machine' | 'unknown';

export interface AmdDecision {
  answeredBy: AnsweredBy;
  /** Audio time of the decision (ms from the first frame pushed). */
  atMs: number;
  reason: 'short-greeting' | 'long-greeting' | 'beep' | 'initial-silence' | 'timeout' | 'external';
}

export interface MessageEnd {
  atMs: number;
  /** Start of the beep (ms), null when the greeting ended in silence or the wait ran out. */
  beepAtMs: number | null;
  reason: 'beep' | 'silence' | 'timeout';
}

export type AmdEvent =
  ({ type: 'decision' } & AmdDecision) | { type: 'beep'; atMs: number } | ({ type: 'message-end' } & MessageEnd);

export interface AmdOptions {
  /** Frame RMS (s16) below which a frame is never speech; the adaptive floor can only raise it. */
  minSpeechRms: number;
  /** A silence this long after speech hands the turn over: after a short greeting the answer is `human`. */
  turnPauseMs: number;
  /** Speech running this long with no turn-taking pause is a recorded greeting: `machine`. */
  machineSpeechMs: number;
  /** Shorter speech (a click, a breath) is not a greeting. */
  minGreetingMs: number;
  /** Nothing said for this long after the answer: `unknown` (a silent line, or a person waiting for us). */
  initialSilenceMs: number;
  /** After `machine`, a silence this long after the last speech ends the greeting (no beep heard). */
  messageEndSilenceMs: number;
  /** After `machine`, stop waiting for the greeting's end at this audio time and leave the message anyway. */
  maxGreetingMs: number;
  beep: BeepOptions;
}

/**
 * Defaults chosen on the benchmark (benchmarks/amd/README.md, both sets), against Twilio's AMD tuning (speech
 * threshold 2400 ms, speech-end threshold 1200 ms, silence timeout 5000 ms):
 *  - machineSpeechMs 3600, not Twilio's 2400: a person answering a business line ("Thank you for calling
 *    Northside Pharmacy, this is Jenny, how can I help you?") talks 2.5–3.5 s before the pause, and taking them for
 *    a machine hangs up on them, the costliest error. The longer look costs every machine decision about 1.2 s,
 *    still before a long greeting ends (the hang-up or the wait for the beep starts in time); a short greeting
 *    with a beep is decided by the beep, whatever its length.
 *  - turnPauseMs 1000, not 800: after a short greeting, the beep of a short voicemail ("Leave a message." …
 *    beep) comes 0.25–0.75 s later and takes ~0.15 s to confirm; an 800 ms pause decided `human` just before some
 *    beeps. Still under Twilio's 1200 ms: a person who said "Hello?" waits about a second, and every 100 ms here
 *    is 100 ms of dead air before the agent's first word.
 * What the audio cannot tell: a short greeting with no beep ("Leave a message." then silence) looks exactly like
 * "Hello?" then silence, and is taken for a person (the words would tell; see the README).
 */
const DEFAULT_AMD: AmdOptions = {
  minSpeechRms: 300,
  turnPauseMs: 1000,
  machineSpeechMs: 3600,
  minGreetingMs: 120,
  initialSilenceMs: 5000,
  messageEndSilenceMs: 1500,
  maxGreetingMs: 45_000,
  beep: DEFAULT_BEEP,
};

const FRAME_MS = 20;

export class AnsweringMachineDetector {
  private readonly frameLen: number;
  private readonly opts: AmdOptions;
  private readonly beeps: BeepTracker;
  private pending: Int16Array = new Int16Array(0);
  private tMs = 0;
  private floor = -1;
  private spanStart = -1;
  private lastLoud = -1;
  private decided: AmdDecision | null = null;
  private ended: MessageEnd | null = null;
  private beepStart: number | null = null;

  constructor(
    readonly rate: number,
    opts: Partial<AmdOptions> = {},
  ) {
    this.opts = { ...DEFAULT_AMD, ...opts, beep: { ...DEFAULT_AMD.beep, ...opts.beep } };
    this.frameLen = Math.round((rate * FRAME_MS) / 1000);
    this.beeps = new BeepTracker(this.opts.beep);
  }

  get decision(): AmdDecision | null {
    return this.decided;
  }

  get messageEnd(): MessageEnd | null {
    return this.ended;
  }

  /** Start of the first beep heard (ms), null before one. */
  get beepAtMs(): number | null {
    return this.beepStart;
  }

  /** Nothing more to find: a human/unknown decision, or a machine whose greeting has ended. */
  get finished(): boolean {
    return this.decided !== null && (this.decided.answeredBy !== 'machine' || this.ended !== null);
  }

  /** Audio pushed so far (ms). */
  get elapsedMs(): number {
    return this.tMs;
  }

  /**
   * Another decider (Twilio's AMD) answered `machine`: look for the greeting's end (the beep, its silence, the time
   * limit) whatever this detector decided or would decide, so that the message-end is found and reported by `push`.
   * Without it, a detector that had taken the greeting for a person (or silence) was finished and read no more
   * audio, and the message waited for the caller's fallback timer.
   */
  followMachine(): void {
    if (this.decided?.answeredBy === 'machine') return;
    this.decided = { answeredBy: 'machine', atMs: this.tMs, reason: 'external' };
  }

  /** Caller samples in order, any length; returns what was decided on the frames they completed. */
  push(samples: Int16Array): AmdEvent[] {
    const out: AmdEvent[] = [];
    if (this.finished) return out;
    let buf = samples;
    if (this.pending.length) {
      buf = new Int16Array(this.pending.length + samples.length);
      buf.set(this.pending);
      buf.set(samples, this.pending.length);
    }
    let off = 0;
    for (; off + this.frameLen <= buf.length && !this.finished; off += this.frameLen) {
      this.frame(buf.subarray(off, off + this.frameLen), out);
    }
    this.pending = this.finished ? new Int16Array(0) : buf.slice(off);
    return out;
  }

  private frame(f: Int16Array, out: AmdEvent[]): void {
    const at = this.tMs;
    this.tMs += FRAME_MS;
    let sum = 0;
    for (let i = 0; i < f.length; i++) sum += f[i]! * f[i]!;
    const rms = Math.sqrt(sum / f.length);
    // Noise floor: follows quiet frames down at once and creeps up slowly, so steady line noise is not speech.
    if (this.floor < 0 || rms < this.floor) this.floor = rms;
    else this.floor += (rms - this.floor) * 0.002;
    const loud = rms >= Math.max(this.opts.minSpeechRms, this.floor * 3);

    const beep = loud ? this.beeps.push(dominantTone(f, this.rate), true, at) : this.beeps.push(SILENT, false, at);
    if (beep?.event === 'beep') {
      this.beepStart ??= beep.startMs;
      out.push({ type: 'beep', atMs: beep.startMs });
      if (!this.decided) this.decide({ answeredBy: 'machine', atMs: this.tMs, reason: 'beep' }, out);
    } else if (beep?.event === 'beep-end' && this.decided?.answeredBy === 'machine') {
      return this.end({ atMs: at, beepAtMs: beep.startMs, reason: 'beep' }, out);
    }
    if (loud && !this.beeps.sounding) {
      if (this.spanStart < 0 || at - this.lastLoud >= this.opts.turnPauseMs) this.spanStart = at;
      this.lastLoud = at + FRAME_MS;
    }
    if (!this.decided) this.detect(out);
    else if (this.decided.answeredBy === 'machine') this.awaitEnd(out);
  }

  private detect(out: AmdEvent[]): void {
    const o = this.opts;
    const now = this.tMs;
    if (this.spanStart < 0) {
      if (now >= o.initialSilenceMs) this.decide({ answeredBy: 'unknown', atMs: now, reason: 'initial-silence' }, out);
      return;
    }
    const span = this.lastLoud - this.spanStart;
    const quiet = now - this.lastLoud;
    if (span >= o.machineSpeechMs) {
      this.decide({ answeredBy: 'machine', atMs: now, reason: 'long-greeting' }, out);
    } else if (quiet >= o.turnPauseMs) {
      // Too short to be a greeting (a click): start over as if nothing was said.
      if (span < o.minGreetingMs) this.spanStart = -1;
      else this.decide({ answeredBy: 'human', atMs: now, reason: 'short-greeting' }, out);
    }
  }

  private awaitEnd(out: AmdEvent[]): void {
    const now = this.tMs;
    if (this.beeps.sounding) {
      // A tone that never stops (a fax, a dead line): after 2 s treat its start as the beep and go on.
      if (this.beepStart !== null && now - this.beepStart >= 2000)
        this.end({ atMs: now, beepAtMs: this.beepStart, reason: 'beep' }, out);
      return;
    }
    if (this.lastLoud >= 0 && now - this.lastLoud >= this.opts.messageEndSilenceMs) {
      this.end({ atMs: now, beepAtMs: null, reason: 'silence' }, out);
    } else if (now >= this.opts.maxGreetingMs) {
      this.end({ atMs: now, beepAtMs: null, reason: 'timeout' }, out);
    }
  }

  private decide(d: AmdDecision, out: AmdEvent[]): void {
    this.decided = d;
    out.push({ type: 'decision', ...d });
  }

  private end(e: MessageEnd, out: AmdEvent[]): void {
    this.ended = e;
    out.push({ type: 'message-end', ...e });
  }
}

const SILENT = { hz: 0, purity: 0 };
