import { performance } from 'node:perf_hooks';
import type { CallControl } from '../../../shared/domains/agents/tools/call-control.ts';
import { pcmToInt16 } from '../../../shared/kernel/audio/pcm.ts';
import type { TransferTarget } from '../../../shared/contracts/agents.ts';
import type { LimitEndReason } from '../../../shared/contracts/end-reasons.ts';
import type { SessionEndReason } from '../../../shared/contracts/sessions.ts';
import { activeRealtimeSessions } from '../../../shared/kernel/observability/metrics.ts';
import { Conversation } from '../pipeline/conversation.ts';
import type { Frame, SayPurpose } from '../pipeline/frames.ts';
import type { Pipeline } from '../pipeline/stage.ts';
import type { ReplyStage } from '../pipeline/answer/reply-stage.ts';
import type { SttStage } from '../pipeline/input/stt-stage.ts';
import { requestCallAnalysis } from '../../../shared/domains/realtime/analysis/request.ts';
import { recordTakenMessage } from '../../../shared/domains/realtime/sessions.ts';
import type { TakenMessage } from '../../../shared/contracts/call-analysis.ts';
import { CallActions } from './call-actions.ts';
import { callAudio } from './call-audio.ts';
import { storeRecording, type StereoRecorder } from '../pipeline/output/recorder.ts';
import { CallLimits } from './call-limits.ts';
import { SessionAccounting } from './session-accounting.ts';
import type { SessionInit } from './types.ts';
import { buildVoicePipeline } from './voice-pipeline.ts';

/**
 * One conversation. Composes the voice pipeline (call/voice-pipeline.ts) and owns its lifecycle: start (the
 * minute hold, the STT connection, the greeting as a `say` frame), the frames that reach the end of the pipeline
 * (trace rows, usage, events for the client, `end-call`), and the end (recording, trace, metering).
 * Transport-neutral: the Twilio and direct handlers feed it PCM, marks and keys and give it an AudioSink.
 */
export class CallSession {
  readonly t0 = performance.now();
  /** Both sides of the call, spilled to a temp file as the call goes (null when recordings are off). */
  readonly recorder: StereoRecorder | null;
  private readonly conv: Conversation;
  private readonly pipeline: Pipeline;
  private readonly stt: SttStage;
  private readonly reply: ReplyStage;
  private audioInMs = 0;
  private ended: Promise<void> | null = null;
  private maxTimer: NodeJS.Timeout;
  private failure: string | null = null;
  private callSid: string | null = null;
  /** What the session does to the phone call itself (hang up, transfer through Twilio's REST API). */
  private readonly actions: CallActions;
  /** A call tool's action, run when the reply that called it has closed (been spoken, or cut). */
  private pendingAction: { run: () => void; signal: AbortSignal } | null = null;
  /** The transfer target a `transfer` frame names, set by the transfer tool. */
  private transferTo: TransferTarget | null = null;
  /** Set by a hang-up or hand-off in progress: the end reason whatever stops the session first. */
  private endReason: SessionEndReason | null = null;
  /** The minute hold, usage counts, trace rows and the metering at the end. */
  private readonly accounting: SessionAccounting;
  /** Per-call and daily caps and the balance: reserved ahead of each reply (the limit stage) and between replies. */
  private readonly limits: CallLimits;
  /** Set when a limit is ending the call: the goodbye is playing, the caller's audio no longer makes turns. */
  private ending: LimitEndReason | null = null;
  /** A limit reached mid-utterance: the goodbye waits for the utterance to end. */
  private closeAfterUtterance: LimitEndReason | null = null;
  /** The utterance a limit waited for played whole (a voicemail message then reads `voicemail-left`). */
  private closedWhole = false;
  /** Resolves when the session has ended (stop, hang-up, `end-call` or limit). */
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  onEnd: (reason: SessionEndReason) => void = () => {};
  /** Set when the caller left a message (take_message): the call then has something to report after it ends. */
  private tookMessage = false;
  /** The message `take_message` took in the reply being spoken, and its store once that reply closed. */
  private pendingMessage: { message: TakenMessage; signal: AbortSignal } | null = null;
  private messageWrite: Promise<void> = Promise.resolve();

  constructor(private readonly s: SessionInit) {
    this.done = new Promise((r) => (this.resolveDone = r));
    this.actions = new CallActions(s, () => this.callSid);
    const audio = callAudio(s, () => this.now());
    this.recorder = audio.recorder;
    this.conv = new Conversation(() => this.now(), audio.playback, s.developerId);
    this.accounting = new SessionAccounting(
      s,
      () => this.stt.audioSeconds,
      () => ({ otherSeconds: this.stt.otherEngineSeconds, switches: this.stt.engineSwitches }),
    );
    this.limits = new CallLimits(s, this.accounting, { now: () => this.now(), end: (r) => this.endWith(r) });
    ({
      pipeline: this.pipeline,
      stt: this.stt,
      reply: this.reply,
    } = buildVoicePipeline(
      s,
      this.conv,
      this.recorder,
      this.limits,
      (f) => this.onFrame(f),
      (stage, e) => this.fail(stage, e),
    ));
    // The hard stop, after the time CallLimits gives the goodbye at the same limit.
    this.maxTimer = setTimeout(() => void this.stop('max-duration'), (s.settings.maxSessionSeconds + 20) * 1000);
    this.maxTimer.unref();
  }

  now(): number {
    return performance.now() - this.t0;
  }

  get id(): string {
    return this.s.sessionId;
  }

  /** Holds the first minute, opens STT, marks the session active and speaks the agent's first message. */
  async start(meta: { callSid?: string; streamSid?: string }): Promise<void> {
    const { engines, transport } = this.s;
    activeRealtimeSessions.inc({ transport: transport.channel });
    // Credit pre-check: hold the first minute (402-style refusal before the caller hears anything); settled at the end.
    await this.limits
      .load()
      .then(() => this.accounting.holdFirstMinute())
      .catch((e: Error) => {
        this.failure = `start: ${e.message}`;
        throw e;
      });
    this.pipeline.push({ kind: 'start' });
    if (this.failure) throw new Error(this.failure);
    this.accounting.write(
      this.s.trace.started({
        developerId: this.s.developerId,
        agentId: this.s.agent.id,
        channel: transport.channel,
        callSid: meta.callSid,
        streamSid: meta.streamSid,
        sttProvider: engines.sttProvider,
        ttsProvider: engines.ttsProvider,
        llmProvider: this.s.runtime.provider,
        agentVersion: this.s.agent.version,
        // A call on an agent test's private platform is a test (a replay's run relabels it when it names the session).
        kind: this.s.infra.config.agentTestPlatform ? 'test' : null,
      }),
    );
    this.callSid = meta.callSid ?? null;
    const limited = await this.limits.arm();
    if (limited) return this.endWith(limited);
    // With answering-machine detection the answer stage greets (or not) once it knows who answered.
    const greeting = this.s.agent.first_message.trim();
    if (greeting && !(this.s.outbound && this.s.settings.amd)) this.say(greeting, 'greeting');
  }

  // ── in: the transport and features push frames at the head ──────────────────────────────────────────────

  /** Caller PCM at the transport's inRate. */
  onAudio(pcm: Buffer): void {
    if (this.ended) return;
    // The stages read caller audio through Int16 views, which need an even byte offset: a socket's message may sit
    // at an odd one, and is then copied once here rather than sample by sample in every stage.
    if (pcm.byteOffset % 2 !== 0) pcm = Buffer.from(pcm);
    this.recorder?.addCaller(pcmToInt16(pcm));
    // The goodbye plays to the end: nothing the caller says now starts a turn or cuts it.
    if (this.ending) return;
    const { inRate } = this.s.transport;
    this.pipeline.push({ kind: 'audio-in', pcm, sampleRate: inRate, atMs: this.audioInMs });
    this.audioInMs += (pcm.length / 2 / inRate) * 1000;
  }

  onDtmf(digit: string): void {
    // A keypad entry is a turn too: none starts while the goodbye plays.
    if (this.ended || this.ending) return;
    this.pipeline.push({ kind: 'dtmf', digit, atMs: this.now() });
  }

  onMark(name: string): void {
    this.pipeline.push({ kind: 'mark', name });
  }

  /** Speaks `text` without the LLM (it takes the floor like a new turn). */
  say(text: string, purpose: SayPurpose): void {
    this.push({ kind: 'say', text, purpose });
  }

  /** Any frame into the pipeline's head: a feature's `say`, `end-call` or `transfer`. */
  push(frame: Frame): void {
    if (!this.ended) this.pipeline.push(frame);
  }

  /**
   * A limit ends the call (the tick between replies, the duration, or the limit stage on a confirmed prepared reply):
   * the goodbye takes the floor (what the agent is saying stops) and the call ends with the reason once it has
   * played. When the limit stage stopped a reply, it has already made that turn say the goodbye (`answered`).
   */
  private endWith(reason: LimitEndReason, answered = false): void {
    if (this.ended || this.ending) return;
    this.ending = reason;
    this.limits.stop();
    this.s.transport.event({ type: 'limit_reached', reason });
    if (answered) return;
    // Never mid-utterance (issue #33): what the agent is saying (a reply, the voicemail message) was reserved with
    // its closing words, so it plays to its end and the goodbye follows it. A voicemail message still held for the
    // beep has not started: it is not started at all (waiting would need the caller audio that now stops here).
    const t = this.conv.current;
    if (t && !t.closed && t.held === null) {
      this.closeAfterUtterance = reason;
      return;
    }
    this.sayGoodbye(reason);
  }

  private sayGoodbye(reason: LimitEndReason): void {
    this.say(this.limits.goodbye, 'goodbye');
    this.push({ kind: 'end-call', reason });
  }

  // ── out: what reaches the end of the pipeline ───────────────────────────────────────────────────────────

  private onFrame(f: Frame): void {
    const { transport, log, sessionId } = this.s;
    switch (f.kind) {
      case 'speech-start':
        return transport.event({ type: 'speech_started' });
      case 'transcript':
        return transport.event({ type: 'transcript', final: f.final, text: f.text });
      case 'dtmf':
        return transport.event({ type: 'dtmf', digit: f.digit });
      case 'agent-speaking':
        return transport.event({ type: 'agent_speaking' });
      case 'agent-done':
        return transport.event({ type: 'agent_done', text: f.text });
      case 'interrupt':
        if (f.flush !== false) transport.event({ type: 'interrupted', reason: f.reason });
        return;
      case 'turn-done': {
        this.accounting.record(f.record);
        if (f.timing) log.debug({ sessionId, ...f.timing }, 'turn timing');
        if (f.record.speaker !== 'assistant') return;
        // A limit reached while this utterance played ends the call now that it has: goodbye, then hang-up.
        const closing = this.closeAfterUtterance;
        this.closeAfterUtterance = null;
        if (closing) {
          this.closedWhole = !f.record.interrupted;
          this.sayGoodbye(closing);
        }
        // A call tool acts once the reply that called it has closed.
        this.storeMessage();
        const action = this.pendingAction;
        this.pendingAction = null;
        if (action && !action.signal.aborted) action.run();
        return;
      }
      case 'interruption':
        log.info({ sessionId, ...f.record }, 'barge-in');
        return this.accounting.interruption(f.record);
      case 'tool': {
        const c = f.call;
        const rec = { name: c.name, ok: !c.error, error: c.error, durationMs: c.durationMs, atMs: f.atMs };
        return this.accounting.tool(f.turnIdx, rec);
      }
      case 'usage':
        if (f.category === 'tts') this.accounting.ttsChars(f.units);
        else this.accounting.llmTokens(f.units);
        return;
      case 'turn-error':
        log.warn({ sessionId, stage: f.stage }, 'turn stage failed');
        return;
      case 'limit-reached':
        return this.endWith(f.reason, f.answered);
      case 'end-call':
        void this.endCall(f.reason);
        return;
      case 'transfer':
        void this.handOff(f);
        return;
    }
  }

  private fail(stage: string, e: unknown): void {
    this.s.log.error({ sessionId: this.s.sessionId, stage, err: (e as Error)?.message }, 'pipeline stage failed');
    if (stage === 'stt' || stage === 'vad') {
      const t = this.conv.current;
      if (t && !t.closed) t.error ??= `${stage}: ${(e as Error)?.message ?? 'error'}`;
      this.failure = `${stage}: ${(e as Error)?.message ?? 'error'}`;
    }
  }

  // ── phone: hang-up, transfer (the call tools) ───────────────────────────────────────────────────────────

  /** The call tools' hold on this session: each acts once the reply that called it has been spoken. */
  readonly control: CallControl = {
    transfer: (target, summary, signal) => {
      if (!this.actions.canTransfer) throw new Error('this session is not a phone call; it cannot be transferred');
      this.pendingAction = {
        run: () => {
          this.transferTo = target;
          this.push({ kind: 'transfer', target: target.name, mode: target.mode, summary });
        },
        signal,
      };
      return `Transferring to ${target.name} once you have spoken. Tell the caller in one short sentence that you are transferring them now.`;
    },
    end: (_reason, signal) => {
      this.pendingAction = { run: () => this.push({ kind: 'end-call', reason: 'agent-ended' }), signal };
      return 'The call ends once you have spoken. Say a short, polite goodbye.';
    },
    takeMessage: (message, signal) => {
      // Kept beside the pending action (a reply may take a message and end the call): stored when the reply closes.
      this.pendingMessage = { message, signal };
      return 'The message is taken. Tell the caller in one short sentence that it will be passed on.';
    },
  };

  /** Stores the message a closed reply took (never one of a prepared reply the caller talked over). */
  private storeMessage(): void {
    const pending = this.pendingMessage;
    this.pendingMessage = null;
    if (!pending || pending.signal.aborted) return;
    this.tookMessage = true;
    const { sessionId, log } = this.s;
    this.messageWrite = recordTakenMessage(this.s.infra.db, sessionId, pending.message).catch((e: Error) =>
      log.error({ sessionId, err: e.message }, 'taken message not stored'),
    );
  }

  /** Hangs the call up (REST for a phone call; the socket closes with the session) and ends the session. */
  private async endCall(reason: SessionEndReason): Promise<void> {
    if (this.ended) return;
    // A cap that is ending the call names it, whichever end-call reaches here first: a voicemail message the cap
    // cut short queues its own `voicemail-left`, which would read as a message left whole.
    // A voicemail message that a limit let play whole was left: that is the call's outcome, not the cap.
    this.endReason ??= reason === 'voicemail-left' && this.closedWhole ? reason : (this.ending ?? reason);
    await this.actions.hangUp();
    await this.stop(reason);
  }

  /** A `transfer` frame whose audio has played: the call is handed over through Twilio's REST API. */
  private async handOff(f: Extract<Frame, { kind: 'transfer' }>): Promise<void> {
    const target = this.transferTo;
    if (this.ended || !target || target.name !== f.target) return;
    // Twilio ends the media stream once the call is updated: that `stop` must not read as the caller hanging up.
    this.endReason = 'transferred';
    if (await this.actions.transfer(f, target, this.now())) return void this.stop('transferred');
    this.endReason = null;
    this.say("I'm sorry, I couldn't transfer your call right now.", 'transfer');
  }

  // ── end ──────────────────────────────────────────────────────────────────────────────────────────────────

  /** Ends the session once: closes STT, finalizes turns, stores the recording and trace, meters the minutes. */
  stop(reason: SessionEndReason): Promise<void> {
    this.ended ??= this.finish(this.endReason ?? reason);
    return this.ended;
  }

  private async finish(reason: SessionEndReason): Promise<void> {
    clearTimeout(this.maxTimer);
    this.limits.stop();
    activeRealtimeSessions.dec({ transport: this.s.transport.channel });
    // Every stage ends: STT closes, a prepared reply is dropped, the reply in progress is stored as heard.
    this.pipeline.push({ kind: 'end', reason });
    const durationMs = this.now();
    const recordingMs = this.recorder?.durationMs ?? 0;
    const recordingKey = await storeRecording(this.recorder, this.s);
    await this.accounting.flush();
    const metrics = this.accounting.metrics(durationMs, this.reply.preparedStats);
    await this.s.trace
      .ended({
        status: this.failure ? 'failed' : 'completed',
        reason,
        error: this.failure,
        metrics,
        recordingKey,
        recordingMs,
      })
      .catch((e: Error) => this.s.log.error({ err: e.message, sessionId: this.s.sessionId }, 'trace write failed'));
    await this.accounting.settle(durationMs);
    await this.messageWrite;
    await requestCallAnalysis(
      this.s.infra,
      this.s.sessionId,
      { analysis: this.s.agent.analysis, tookMessage: this.tookMessage },
      this.s.log,
    );
    this.s.log.info({ sessionId: this.s.sessionId, reason, ...metrics }, 'session ended');
    this.onEnd(reason);
    this.resolveDone();
  }
}
