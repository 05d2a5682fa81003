import { pcmToInt16 } from '../../../../shared/kernel/audio/pcm.ts';
import type { AgentRow } from '../../../../shared/domains/agents/db.ts';
import { fillTemplate, templateDefaults } from '../../../../shared/domains/agents/prompt.ts';
import type { Logger } from '../../../../shared/kernel/observability/logger.ts';
import type { Infra } from '../../../../shared/platform/infra.ts';
import { AnswerWatch } from './answer-watch.ts';
import type { Conversation } from '../conversation.ts';
import type { DataFrame, SystemFrame } from '../frames.ts';
import { Stage } from '../stage.ts';

export interface AnswerStageOptions {
  infra: Infra;
  sessionId: string;
  taskId: string;
  inRate: number;
  agent: Pick<AgentRow, 'first_message' | 'voicemail' | 'variables'>;
  /** The outbound task's template variables (the voicemail message's {{name}}). */
  variables?: Record<string, string | number | boolean>;
  log: Logger;
}

/**
 * Answering-machine detection on an outbound call, the first stage: it reads the caller's audio as it arrives
 * (pipeline/answer/answer-watch.ts: the platform's detector, or Twilio's async AMD answer) and passes everything on. Until
 * someone is known to be there, or while a machine talks, `conversation.holding` keeps caller speech from being a
 * turn (the reply stage) or a barge-in (the turn stage). A person (or no answer either way): the greeting, as a
 * `say`. A machine: `end-call` (voicemail action `hangup`), or the voicemail message as a held `say` at once (it is
 * synthesized while the greeting plays), then, once the greeting has ended (the beep), `play-held` and `end-call`,
 * so the message starts the moment the greeting ends and the call ends once it has played.
 */
export class AnswerStage extends Stage {
  private readonly watch: AnswerWatch;
  /** The voicemail message was rendered (held) when the machine was decided: it plays when the greeting ends. */
  private messageHeld = false;

  constructor(
    private readonly conv: Conversation,
    private readonly o: AnswerStageOptions,
  ) {
    super('answer', { sync: true });
    conv.answeredBy = null;
    this.watch = new AnswerWatch({
      infra: o.infra,
      sessionId: o.sessionId,
      taskId: o.taskId,
      rate: o.inRate,
      now: conv.now,
      log: o.log,
      decided: (a) => this.answered(a),
      greetingEnded: () => this.leaveMessage(),
    });
  }

  protected override onData(frame: DataFrame): void {
    // Only the call's first seconds are read: once the detector has decided (and a machine's greeting has ended),
    // caller audio passes straight on.
    if (frame.kind === 'audio-in' && this.watch.listening) this.watch.push(pcmToInt16(frame.pcm));
    this.emit(frame);
  }

  protected override onSystem(frame: SystemFrame): void {
    if (frame.kind === 'end') this.watch.close();
  }

  private answered(a: 'human' | 'machine' | 'unknown'): void {
    this.conv.answeredBy = a;
    this.conv.answeredAt = this.conv.now();
    if (a !== 'machine') {
      const greeting = this.o.agent.first_message.trim();
      if (greeting) this.emit({ kind: 'say', text: greeting, purpose: 'greeting' });
      return;
    }
    const vm = this.o.agent.voicemail;
    if (!vm || vm.action === 'hangup') return this.emit({ kind: 'end-call', reason: 'voicemail-hung-up' });
    if (vm.action !== 'leave_message' || !vm.message) return;
    // The message is rendered now and held: the greeting goes on for seconds, and a message synthesized only once
    // it ended (on a loaded machine, or a slow voice vendor) reached a voicemail that had already hung up.
    // Unknown {{names}} take the agent's default or are dropped, never read out as braces.
    const text = fillTemplate(vm.message, this.o.variables, templateDefaults(this.o.agent.variables)).trim();
    this.messageHeld = true;
    this.emit({ kind: 'say', text, purpose: 'voicemail', hold: true });
  }

  /** The greeting ended (the beep, or its silence): the held message plays, and the call ends once it has. */
  private leaveMessage(): void {
    if (!this.messageHeld) return;
    this.emit({ kind: 'play-held' });
    this.emit({ kind: 'end-call', reason: 'voicemail-left' });
  }
}
