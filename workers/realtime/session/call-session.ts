import { performance } from 'node:perf_hooks';
import { pcmToInt16 } from '../../../shared/kernel/audio/pcm.ts';
import type { ToolCallRecord } from '../../../shared/kernel/contracts/agents.ts';
import type { LlmMessage } from '../../../shared/engines/llm/types.ts';
import { activeRealtimeSessions } from '../../../shared/kernel/observability/metrics.ts';
import type { Frame } from '../pipeline/frames.ts';
import type { SentenceStage } from '../pipeline/sentence-stage.ts';
import type { Pipeline } from '../pipeline/stage.ts';
import {
  assistantTurn,
  assistantTurnRecord,
  observeTurnStages,
  suspectCutIn,
  type AssistantTurn,
} from './assistant-turn.ts';
import { CallerInput, type SpokenTurn } from './caller-input.ts';
import { DtmfCollector } from './dtmf.ts';
import { PreparedReplies } from './prepared-reply.ts';
import { callAudio } from './call-audio.ts';
import type { Playback } from './playback.ts';
import { buildReplyPipeline } from './reply-pipeline.ts';
import { storeRecording, type StereoRecorder } from './recorder.ts';
import { SessionAccounting, type LimitReason } from './session-accounting.ts';
import { CallLimits } from './call-limits.ts';
import type { SessionInit } from './types.ts';
import type { TransferTarget } from '../../../shared/kernel/contracts/agents.ts';
import type { CallControl } from '../../../shared/domains/agents/tools/call-control.ts';
import { fillTemplate } from '../../../shared/domains/agents/prompt.ts';
import { AnswerWatch } from './answer-watch.ts';
import { CallActions } from './call-actions.ts';

/**
 * One conversation: caller audio → VAD + endpointing → STT → user turn → LLM → sentences → TTS → playback, with
 * barge-in, DTMF, traces and the stereo recording. Transport-neutral: the Twilio and direct handlers feed it PCM
 * and marks and give it an AudioSink.
 */
export class CallSession {
  readonly t0 = performance.now();
  /** Both sides of the call, spilled to a temp file as the call goes (null when recordings are off). */
  readonly recorder: StereoRecorder | null;
  private readonly playback: Playback;
  private readonly input: CallerInput;
  private readonly out: Pipeline;
  private readonly sentences: SentenceStage;
  private history: LlmMessage[] = [];
  private turnIdx = 0;
  private turnSeq = 0;
  private current: AssistantTurn | null = null;
  private readonly prepared: PreparedReplies = this.preparedReplies();
  private readonly dtmf = new DtmfCollector((digits) => this.keypadTurn(digits));
  private ended: Promise<void> | null = null;
  private maxTimer: NodeJS.Timeout;
  private callSid: string | null = null;
  /** Outbound calls: who answered (null on inbound calls and with REALTIME_AMD off). */
  private answer: AnswerWatch | null = null;
  private readonly actions: CallActions;
  /** Run when the named turn has been spoken (the voicemail message, then hang up). */
  private readonly afterTurn = new Map<string, () => void>();
  /** A call tool's action, run when the turn that called it closes. */
  private pendingAction: { run: () => void; signal: AbortSignal } | null = null;
  /** Set by a hang-up or hand-off in progress: the end reason whatever stops the session first. */
  private endReason: string | null = null;
  /** The minute hold, usage counts, trace rows and the metering at the end. */
  private readonly accounting: SessionAccounting;
  /** Per-call and daily caps and the balance, reserved ahead of each reply; ends the call with a goodbye. */
  private readonly limits: CallLimits;
  /** Set when a limit is ending the call: the goodbye is playing, no new turn starts. */
  private ending: { reason: LimitReason; turnId: string; played: () => void } | null = null;
  /** Resolves when the session has ended (stop, hang-up or limit). */
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  onEnd: (reason: string) => void = () => {};

  constructor(private readonly s: SessionInit) {
    const { settings } = s;
    this.done = new Promise((r) => (this.resolveDone = r));
    this.actions = new CallActions(s, () => this.callSid);
    this.accounting = new SessionAccounting(s, () => this.input.sttAudioSeconds);
    this.limits = new CallLimits(s, this.accounting, { now: () => this.now(), end: (r) => this.endWith(r) });
    ({ playback: this.playback, recorder: this.recorder } = callAudio(s, () => this.now()));
    this.input = new CallerInput(s, {
      now: () => this.now(),
      agentActive: () => this.agentActive,
      interrupt: (reason, onsetAt) => this.interrupt(reason, onsetAt),
      spoke: (turn) => this.spoke(turn),
      prepare: (text) => !this.ended && !this.ending && !this.answer?.holding && this.prepared.prepare(text),
      unprepare: () => this.prepared.drop(),
      fail: (stage, e) => this.fail(stage, e),
    });

    ({ pipeline: this.out, sentences: this.sentences } = buildReplyPipeline(s, {
      now: () => this.now(),
      history: () => this.history,
      turn: (id) => this.turnById(id),
      toolExecuted: (turnId, rec) => this.toolExecuted(turnId, rec),
      llmTokens: (n) => this.accounting.llmTokens(n),
      queuedAheadMs: () => this.playback.queuedAheadMs(),
      output: (f) => this.onOutputFrame(f),
      fail: (stage, e) => this.fail(stage, e),
    }));
    // The hard stop, after the time CallLimits gives the goodbye at the same limit.
    this.maxTimer = setTimeout(() => void this.stop('max_duration'), (settings.maxSessionSeconds + 20) * 1000);
    this.maxTimer.unref();
  }

  now(): number {
    return performance.now() - this.t0;
  }

  get id(): string {
    return this.s.sessionId;
  }

  private turnById(id: string): AssistantTurn | null {
    return this.current?.id === id ? this.current : null;
  }

  /** Opens STT, marks the session active and speaks the agent's first message. */
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

    this.input.openStt();
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
      }),
    );
    this.callSid = meta.callSid ?? null;
    const limited = await this.limits.arm();
    if (limited) return this.endWith(limited);
    const out = this.s.outbound;
    if (out && this.s.settings.amd) {
      this.answer = new AnswerWatch({
        infra: this.s.infra,
        sessionId: this.s.sessionId,
        taskId: out.taskId,
        rate: transport.inRate,
        now: () => this.now(),
        log: this.s.log,
        decided: (a) => this.answered(a),
        greetingEnded: () => this.leaveMessage(),
      });
    } else this.greet();
  }

  // ── input ────────────────────────────────────────────────────────────────────────────────────────────────

  /** Caller PCM at the transport's inRate. */
  onAudio(pcm: Buffer): void {
    if (this.ended) return;
    const samples = pcmToInt16(pcm);
    this.recorder?.addCaller(samples);
    // The goodbye plays to the end: nothing the caller says now starts a turn or cuts it.
    if (this.ending) return;
    this.answer?.push(samples);
    this.input.onAudio(pcm);
  }

  private preparedReplies(): PreparedReplies {
    return new PreparedReplies({
      now: () => this.now(),
      current: () => this.current,
      setCurrent: (t) => (this.current = t),
      idle: () => !this.agentActive && (this.current === null || this.current.closed),
      newTurnId: () => `t${++this.turnSeq}`,
      push: (f) => this.out.push(f),
      output: (f) => this.onOutputFrame(f),
    });
  }

  private get agentActive(): boolean {
    const t = this.current;
    return this.playback.speaking || (t !== null && !t.closed && t.userText !== '' && t.held === null);
  }

  /** The caller finished an utterance: its user turn row, and the reply to it when something was said. */
  private spoke(u: SpokenTurn): void {
    this.accounting.record({
      idx: this.turnIdx++,
      speaker: 'user',
      text: u.text,
      startMs: u.onsetAt,
      endMs: u.lastSpeechAt,
      sttMs: Math.max(0, u.finalAt - u.lastSpeechAt),
    });
    // Until someone is known to be there (or while a machine talks), speech is not a turn for the agent.
    if (!u.text || this.answer?.holding) return;
    this.userTurn(u.text, u.lastSpeechAt, u.endpointAt, u.endpointWaitMs);
    if (this.current) this.current.vadLagMs = u.vadLagMs;
  }

  onDtmf(digit: string): void {
    if (this.ended) return;
    this.s.transport.event({ type: 'dtmf', digit });
    if (this.agentActive && this.current) this.interrupt('dtmf', null);
    this.dtmf.push(digit);
  }

  private keypadTurn(digits: string): void {
    if (this.ended) return;
    const now = this.now();
    this.accounting.record({
      idx: this.turnIdx++,
      speaker: 'user',
      text: `DTMF ${digits}`,
      startMs: now,
      endMs: now,
      sttMs: 0,
    });
    this.userTurn(`The caller pressed the keypad keys: ${digits.split('').join(' ')}`, now, now, 0);
  }

  onMark(name: string): void {
    const s = this.playback.onMark(name);
    if (!s) return;
    const t = this.current;
    if (t && t.id === s.turnId && t.llmDone && this.playback.turnPlayed(t.id)) this.closeTurn(t, false);
  }

  // ── output ───────────────────────────────────────────────────────────────────────────────────────────────

  private newAssistantTurn(userText: string, lastSpeechAt: number | null, endpointAt: number | null): AssistantTurn {
    const t = assistantTurn(`t${++this.turnSeq}`, this.turnIdx++, this.now(), { userText, lastSpeechAt, endpointAt });
    this.current = t;
    return t;
  }

  private userTurn(text: string, lastSpeechAt: number, endpointAt: number, endpointWaitMs: number): void {
    if (this.ending) return;
    // A reply prepared while the caller was quiet, when it answers what they said, plays from here.
    if (this.prepared.confirm(text, { idx: this.turnIdx, lastSpeechAt, endpointAt, endpointWaitMs })) {
      this.turnIdx++;
      // Its LLM already ran; the reservation still decides whether the call goes on after it.
      void this.limits.beforeReply().then((stop) => stop && this.endWith(stop));
      return;
    }
    const cur = this.current;
    if (cur && !cur.closed) {
      // Played out (marks back, or past the estimate for a far end that echoes none): a finished turn, not a cut.
      if (cur.llmDone && !this.playback.speaking) this.closeTurn(cur, false);
      else this.interrupt('new_turn', null);
    }
    this.history.push({ role: 'user', content: text });
    // The user message goes in with the turn; the LLM stage reads history without it.
    const t = this.newAssistantTurn(text, lastSpeechAt, endpointAt);
    t.endpointWaitMs = endpointWaitMs;
    this.history.pop();
    // The reply starts once what it will use is reserved (normally one short statement); a limit answers it with
    // the goodbye instead.
    const reply = () => this.out.push({ kind: 'user-turn', text, lastSpeechMs: lastSpeechAt, sttMs: 0, turnId: t.id });
    void this.limits.beforeReply().then((stop) => {
      if (this.ended || this.ending || t.closed || this.current !== t) return;
      if (stop) this.endWith(stop, t);
      else reply();
    });
  }

  /**
   * A limit ends the call: what the agent is saying stops, the goodbye is said (in the turn that would have
   * answered, if there is one) and the call ends with the reason once it has played (or after a time limit for a
   * far end that echoes no marks).
   */
  private endWith(reason: LimitReason, answering?: AssistantTurn): void {
    if (this.ended || this.ending) return;
    this.limits.stop();
    this.prepared.drop();
    const cur = this.current;
    if (cur && !cur.closed && cur !== answering) {
      const heard = this.playback.heardWords(cur.id, this.now());
      this.playback.clear();
      this.recorder?.cutAgent();
      this.out.push({ kind: 'interrupt', atMs: this.now(), reason });
      this.closeTurn(cur, true, heard.join(' '));
    }
    const text = this.limits.goodbye;
    let played!: () => void;
    const done = new Promise<void>((r) => (played = r));
    this.s.transport.event({ type: 'limit_reached', reason });
    let t: AssistantTurn;
    if (answering && !answering.closed) {
      // The turn that would have answered says it (its text comes from what is spoken, as a reply's does).
      t = answering;
      t.llmDone = true;
      this.ending = { reason, turnId: t.id, played };
      this.sentences.push({ kind: 'llm-text', turnId: t.id, text: text + ' ' });
      this.sentences.push({ kind: 'llm-done', turnId: t.id, llmMs: 0 });
    } else {
      t = this.say(text, 'goodbye');
      this.ending = { reason, turnId: t.id, played };
    }
    const wait = setTimeout(played, 5_000 + text.length * 120);
    wait.unref();
    // A phone call is hung up too (endCall), not only its stream.
    void done.then(() => {
      clearTimeout(wait);
      return this.endCall(reason);
    });
  }

  private onOutputFrame(f: Frame): void {
    if (f.kind === 'llm-text') return;
    const t = 'turnId' in f ? this.turnById(f.turnId) : null;
    if (!t || t.closed) return;
    if (t.held) {
      t.held.push(f);
      return;
    }
    if (f.kind === 'tts-audio') {
      if (f.pcm.length) {
        if (t.firstSendAt === null) this.firstSend(t);
        this.playback.sendAudio(f.pcm);
      }
      if (f.last) {
        const startMs = this.playback.nextStartMs();
        if (f.text.trim()) {
          this.playback.endSentence(t.id, f.sentence, f.text, startMs);
          if (!f.cached) this.accounting.ttsChars(f.text.length);
          if (t.userText) t.fullText += (t.fullText ? ' ' : '') + f.text;
        }
      }
    } else if (f.kind === 'llm-done') {
      t.llmDone = true;
      if (f.error) t.error ??= f.error;
      this.s.transport.event({ type: 'agent_done', text: t.fullText });
      if (this.playback.turnPlayed(t.id) || !this.playback.speaking) {
        // Nothing (left) to play: a failed turn, or a transport that echoes no marks.
        if (!this.playback.speaking) this.closeTurn(t, false);
      }
    }
  }

  private firstSend(t: AssistantTurn): void {
    const now = this.now();
    t.firstSendAt = now;
    this.s.transport.event({ type: 'agent_speaking' });
    observeTurnStages(t);
  }

  /** Barge-in (or a superseding turn): flush playback, cancel LLM/TTS, keep tool results, truncate to what was heard. */
  private interrupt(reason: string, speechOnsetAt: number | null): void {
    // An answering machine does not barge in: its greeting has ended before the message starts.
    if (this.answer?.answeredBy === 'machine') return;
    const t = this.current;
    const decidedAt = this.now();
    const onsetAt = speechOnsetAt ?? decidedAt;
    const heardAtOnset = t ? this.playback.heardWords(t.id, onsetAt).length : 0;
    const heard = t ? this.playback.heardWords(t.id, decidedAt) : [];
    this.playback.clear();
    this.recorder?.cutAgent();
    this.out.push({ kind: 'interrupt', atMs: decidedAt, reason });
    const stopMs = this.now() - decidedAt;
    this.s.transport.event({ type: 'interrupted', reason });
    if (!t || t.closed) return;
    if (speechOnsetAt !== null) suspectCutIn(t, speechOnsetAt); // issue 25: cut-in rate per agent

    this.closeTurn(t, true, heard.join(' '));
    if (reason === 'new_turn') return;
    const rec = {
      turnIdx: t.idx,
      atMs: onsetAt,
      detectionMs: Math.max(0, decidedAt - onsetAt),
      stopMs,
      bleedWords: Math.max(0, heard.length - heardAtOnset),
      reason,
    };
    this.s.log.info({ sessionId: this.s.sessionId, ...rec }, 'barge-in');
    this.accounting.interruption(rec);
  }

  private closeTurn(t: AssistantTurn, interrupted: boolean, heardText?: string): void {
    if (t.closed) return;
    t.closed = true;
    const spoken = interrupted ? (heardText ?? '') : t.fullText;
    this.history.push(...(t.userText ? [{ role: 'user' as const, content: t.userText }] : []), ...t.kept);
    if (spoken) this.history.push({ role: 'assistant', content: spoken });
    const { record, timing } = assistantTurnRecord(t, { spoken, interrupted, now: this.now() });
    this.accounting.record(record);
    this.playback.forget(t.id);
    if (this.ending?.turnId === t.id) this.ending.played();
    if (timing) this.s.log.debug({ sessionId: this.s.sessionId, ...timing }, 'turn timing');
    const after = this.afterTurn.get(t.id);
    this.afterTurn.delete(t.id);
    const action = this.pendingAction;
    this.pendingAction = null;
    after?.();
    if (action && !action.signal.aborted) action.run();
  }

  private toolExecuted(turnId: string, rec: ToolCallRecord): void {
    const t = this.turnById(turnId);
    this.accounting.tool(t?.idx ?? this.turnIdx, {
      name: rec.name,
      ok: !rec.error,
      error: rec.error,
      durationMs: rec.durationMs,
      atMs: this.now(),
    });
  }

  private fail(stage: string, e: unknown): void {
    this.s.log.error({ sessionId: this.s.sessionId, stage, err: (e as Error)?.message }, 'pipeline stage failed');
    if (stage === 'stt' || stage === 'vad') {
      const t = this.current;
      if (t && !t.closed) t.error ??= `${stage}: ${(e as Error)?.message ?? 'error'}`;
      this.failure = `${stage}: ${(e as Error)?.message ?? 'error'}`;
    }
  }
  private failure: string | null = null;

  // ── phone: answering machines, hang-up, transfer ────────────────────────────────────────────────────────

  /** Speaks `text` without the LLM (the pipeline's `say` frame: greeting, voicemail, transfer notices). */
  private say(text: string, purpose: 'greeting' | 'voicemail' | 'transfer' | 'goodbye'): AssistantTurn {
    const t = this.newAssistantTurn('', null, null);
    t.fullText = text;
    t.llmDone = true;
    this.s.log.debug({ sessionId: this.s.sessionId, purpose }, 'say');
    this.sentences.push({ kind: 'llm-text', turnId: t.id, text: text + ' ' });
    this.sentences.push({ kind: 'llm-done', turnId: t.id, llmMs: 0 });
    return t;
  }

  /** The agent's first message, unless it waits for answering-machine detection on an outbound call. */
  private greet(): void {
    const greeting = this.s.agent.first_message.trim();
    if (greeting) this.say(greeting, 'greeting');
  }

  private answered(a: 'human' | 'machine' | 'unknown'): void {
    if (this.ended) return;
    if (a !== 'machine') return this.greet();
    // A machine: the agent never takes its greeting for a turn (holding), and says only the voicemail message.
    const vm = this.s.agent.voicemail;
    if (!vm || vm.action === 'hangup') void this.endCall('voicemail');
  }

  private leaveMessage(): void {
    const vm = this.s.agent.voicemail;
    if (this.ended || vm?.action !== 'leave_message' || !vm.message) return;
    // Unknown {{names}} are dropped rather than read out as braces.
    const text = fillTemplate(vm.message, this.s.outbound?.variables)
      .replace(/\{\{[^}]*\}\}/g, '')
      .trim();
    this.endReason = 'voicemail';
    const t = this.say(text, 'voicemail');
    this.afterTurn.set(t.id, () => void this.endCall('voicemail'));
  }

  /** Hangs the call up (REST for a phone call; the socket closes with the session) and ends the session. */
  private async endCall(reason: string): Promise<void> {
    if (this.ended) return;
    this.endReason ??= reason;
    await this.actions.hangUp();
    await this.stop(reason);
  }

  private async handOff(target: TransferTarget, summary: string): Promise<void> {
    if (this.ended) return;
    // Twilio ends the media stream once the call is updated: that `stop` must not read as the caller hanging up.
    this.endReason = 'transferred';
    const frame = { kind: 'transfer' as const, target: target.name, mode: target.mode, summary };
    if (await this.actions.transfer(frame, target, this.now())) return void this.stop('transferred');
    this.endReason = null;
    this.say("I'm sorry, I couldn't transfer your call right now.", 'transfer');
  }

  /** The call tools' hold on this session: each acts once the reply that called it has been spoken. */
  readonly control: CallControl = {
    transfer: (target, summary, signal) => {
      if (!this.actions.canTransfer) throw new Error('this session is not a phone call; it cannot be transferred');
      this.pendingAction = { run: () => void this.handOff(target, summary), signal };
      return `Transferring to ${target.name} once you have spoken. Tell the caller in one short sentence that you are transferring them now.`;
    },
    end: (_reason, signal) => {
      this.pendingAction = { run: () => void this.endCall('agent-ended'), signal };
      return 'The call ends once you have spoken. Say a short, polite goodbye.';
    },
  };

  // ── end ──────────────────────────────────────────────────────────────────────────────────────────────────

  /** Ends the session once: closes STT, finalizes turns, stores the recording and trace, meters the minutes. */
  stop(reason: string): Promise<void> {
    this.ended ??= this.finish(this.endReason ?? reason);
    return this.ended;
  }

  private async finish(reason: string): Promise<void> {
    clearTimeout(this.maxTimer);
    this.limits.stop();
    this.answer?.close();
    this.dtmf.cancel();
    activeRealtimeSessions.dec({ transport: this.s.transport.channel });
    this.prepared.drop();
    const t = this.current;
    if (t && !t.closed) {
      const heard = this.playback.heardWords(t.id, this.now());
      const all = !this.playback.speaking && t.llmDone;
      this.closeTurn(t, !all, all ? undefined : heard.join(' '));
    }
    this.input.close(reason);
    this.out.push({ kind: 'end', reason });
    const durationMs = this.now();
    const recordingMs = this.recorder?.durationMs ?? 0;
    const recordingKey = await storeRecording(this.recorder, this.s);
    await this.accounting.flush();
    const metrics = this.accounting.metrics(durationMs, this.prepared.stats);
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
    this.s.log.info({ sessionId: this.s.sessionId, reason, ...metrics }, 'session ended');
    this.onEnd(reason);
    this.resolveDone();
  }
}
