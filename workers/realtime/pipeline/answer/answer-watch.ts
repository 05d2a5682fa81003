import { AnsweringMachineDetector, type AnsweredBy } from '../../../../shared/domains/realtime/amd/detector.ts';
import { recordAnswer } from '../../../../shared/domains/realtime/amd/outcome.ts';
import { taskTwilioAmd } from '../../../../shared/domains/realtime/outbound-tasks.ts';
import type { Infra } from '../../../../shared/platform/infra.ts';
import type { Logger } from '../../../../shared/kernel/observability/logger.ts';

export interface AnswerWatchOptions {
  infra: Infra;
  sessionId: string;
  taskId: string;
  /** Caller audio rate. */
  rate: number;
  /** Session clock (ms since the session started). */
  now: () => number;
  log: Logger;
  /** Who answered, once: the platform's detector or Twilio's AMD callback, whichever came first. */
  decided: (answeredBy: AnsweredBy, source: 'detector' | 'twilio') => void;
  /** After `machine`: the greeting ended (at the beep, else after its silence): time to leave a message. */
  greetingEnded: (beepAtMs: number | null) => void;
}

/** How often Twilio's async AMD answer is looked for, and for how long after the stream started. */
const POLL_MS = 500;
const POLL_FOR_MS = 60_000;
/** After Twilio alone said `machine`, the longest wait for our detector to find the greeting's end. */
const GREETING_FALLBACK_MS = 30_000;

/**
 * Answering-machine detection on one outbound call: the caller's audio frames go through the platform's detector
 * (shared/domains/realtime/amd) while Twilio's async AMD answer (if the account asked for it) is read from the task; the
 * first answer is recorded on the session (observability, webhook) and handed to the session. A stage over the
 * caller's audio frames: it only reads them.
 */
export class AnswerWatch {
  private readonly detector: AnsweringMachineDetector;
  private answered: AnsweredBy | null = null;
  private audioStartMs: number | null = null;
  private ended = false;
  private poll: NodeJS.Timeout | null = null;
  private fallback: NodeJS.Timeout | null = null;
  private readonly startedAt: number;

  constructor(private readonly o: AnswerWatchOptions) {
    this.detector = new AnsweringMachineDetector(o.rate);
    this.startedAt = o.now();
    // Twilio's answer is only ever written when the call was placed asking for it: otherwise no round trips.
    if (o.infra.config.TWILIO_MACHINE_DETECTION !== 'off') {
      this.poll = setInterval(() => void this.checkTwilio(), POLL_MS);
      this.poll.unref();
    }
  }

  /** Still reading the caller's audio: once the detector has nothing more to find, frames need not come here. */
  get listening(): boolean {
    return !this.ended && !this.detector.finished;
  }

  get answeredBy(): AnsweredBy | null {
    return this.answered;
  }

  /** While nobody is known to be there, or a machine is: caller speech is not a turn for the agent. */
  get holding(): boolean {
    return this.answered === null || this.answered === 'machine';
  }

  push(samples: Int16Array): void {
    if (!this.listening) return;
    this.audioStartMs ??= this.o.now();
    for (const ev of this.detector.push(samples)) {
      if (ev.type === 'decision') this.decide(ev.answeredBy, 'detector');
      else if (ev.type === 'beep') this.record(this.answered ?? 'machine', this.sessionMs(ev.atMs));
      else if (this.answered === 'machine') this.greetingEnd(ev.beepAtMs === null ? null : this.sessionMs(ev.beepAtMs));
    }
  }

  close(): void {
    this.ended = true;
    if (this.poll) clearInterval(this.poll);
    if (this.fallback) clearTimeout(this.fallback);
    this.poll = this.fallback = null;
  }

  private sessionMs(detectorMs: number): number {
    return (this.audioStartMs ?? 0) + detectorMs;
  }

  /** `greetingOver`: Twilio's DetectMessageEnd answered `machine_end_*`, i.e. after the greeting. */
  private decide(a: AnsweredBy, source: 'detector' | 'twilio', greetingOver = false): void {
    if (this.answered || this.ended) return;
    this.answered = a;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    const beep = this.detector.beepAtMs;
    this.record(a, beep === null ? null : this.sessionMs(beep), source);
    this.o.log.info(
      { sessionId: this.o.sessionId, answeredBy: a, source, atMs: Math.round(this.o.now()) },
      'answered by',
    );
    this.o.decided(a, source);
    if (a !== 'machine') return;
    // Twilio said machine: the detector looks for the greeting's end from here, whatever it had decided itself.
    if (source === 'twilio' && !greetingOver) this.detector.followMachine();
    // The detector may have found the greeting's end already (Twilio's answer came late), or may never decide
    // machine itself (Twilio's answer wins a disagreement): do not wait forever for it.
    const end = this.detector.messageEnd;
    if (greetingOver) this.greetingEnd(beep === null ? null : this.sessionMs(beep));
    else if (end) this.greetingEnd(end.beepAtMs === null ? null : this.sessionMs(end.beepAtMs));
    else {
      this.fallback = setTimeout(() => this.greetingEnd(null), GREETING_FALLBACK_MS);
      this.fallback.unref();
    }
  }

  private greetingEnd(beepAtMs: number | null): void {
    if (this.ended) return;
    this.close();
    this.o.greetingEnded(beepAtMs);
  }

  private record(a: AnsweredBy, beepAtMs: number | null, source: 'detector' | 'twilio' = 'detector'): void {
    void recordAnswer(this.o.infra, this.o.sessionId, { answeredBy: a, source, beepAtMs }).catch((e: Error) =>
      this.o.log.warn({ sessionId: this.o.sessionId, err: e.message }, 'answered-by not recorded'),
    );
  }

  private async checkTwilio(): Promise<void> {
    if (this.answered || this.ended) return;
    if (this.o.now() - this.startedAt > POLL_FOR_MS) {
      if (this.poll) clearInterval(this.poll);
      this.poll = null;
      return;
    }
    const t = await taskTwilioAmd(this.o.infra.db, this.o.taskId).catch(() => null);
    if (t) this.decide(t.answered_by, 'twilio', t.amd_answered_by.startsWith('machine_end'));
  }
}
