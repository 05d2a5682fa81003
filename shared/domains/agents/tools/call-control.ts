import {
  END_CALL_TOOL_NAME,
  TAKE_MESSAGE_TOOL_NAME,
  TRANSFER_TOOL_NAME,
  type CallTools,
  type TransferTarget,
} from '../../../contracts/agents.ts';
import type { TakenMessage } from '../../../contracts/call-analysis.ts';
import type { AgentToolHandler } from '../turn-runner.ts';

/**
 * What a live call lets the agent do to it. Both act after the reply that called the tool has been spoken, so
 * the model's "I'll put you through now" or "Goodbye" is heard first; each returns the tool result the model sees.
 */
export interface CallControl {
  /** `signal` is the turn's: a reply that is dropped (a prepared reply the caller talked over) never acts. */
  transfer(target: TransferTarget, summary: string, signal: AbortSignal): string;
  end(reason: string, signal: AbortSignal): string;
  /** Keeps the caller's message with the call (stored once the reply that took it has closed). */
  takeMessage(message: TakenMessage, signal: AbortSignal): string;
}

/** `take_message`'s arguments: the same on every LLM provider, and what the local engine fills in turn. */
export const TAKE_MESSAGE_PARAMETERS = {
  type: 'object',
  properties: {
    callerName: { type: 'string', maxLength: 200, description: "The caller's name, if they gave it." },
    callbackNumber: { type: 'string', maxLength: 50, description: 'The number to call back on, if they gave one.' },
    message: { type: 'string', minLength: 1, maxLength: 2000, description: "The message, in the caller's words." },
    urgency: { type: 'string', enum: ['low', 'normal', 'high'], description: 'How urgent the caller says it is.' },
  },
  required: ['message'],
  additionalProperties: false,
};

/**
 * The built-in call tools an agent was given (`callTools`), for a session that can carry them out: `transfer_call`
 * (to one of the agent's configured targets, cold or warm) and `end_call`. Chat has no call: none are offered.
 */
export function callControlTools(config: CallTools | null, control: CallControl | undefined): AgentToolHandler[] {
  if (!config || !control) return [];
  const tools: AgentToolHandler[] = [];
  const targets = config.transferTargets;
  if (targets.length) {
    const listed = targets.map((t) => `"${t.name}"${t.description ? `: ${t.description}` : ''}`).join('; ');
    tools.push({
      definition: {
        name: TRANSFER_TOOL_NAME,
        description:
          `Transfer the caller to a person when they ask for one or when you cannot help. Targets: ${listed}. ` +
          'After calling it, say one short sentence telling the caller you are transferring them.',
        parameters: {
          type: 'object',
          properties: {
            target: { type: 'string', enum: targets.map((t) => t.name), description: 'Who to transfer to.' },
            summary: {
              type: 'string',
              maxLength: 500,
              description: 'For the person taking the call: who is calling and why, in one or two sentences.',
            },
          },
          required: ['target', 'summary'],
          additionalProperties: false,
        },
      },
      async execute(args, { signal }) {
        const a = args as { target: string; summary: string };
        const target = targets.find((t) => t.name === a.target);
        if (!target) throw new Error(`unknown transfer target "${a.target}"`);
        return control.transfer(target, a.summary.trim(), signal);
      },
    });
  }
  if (config.endCall) {
    tools.push({
      definition: {
        name: END_CALL_TOOL_NAME,
        description:
          'End the call when the conversation is over (the caller said goodbye, or asked you to hang up). ' +
          'After calling it, say a short, polite goodbye; the call ends once it has been spoken.',
        parameters: {
          type: 'object',
          properties: { reason: { type: 'string', maxLength: 200, description: 'Why the call ends.' } },
          additionalProperties: false,
        },
      },
      async execute(args, { signal }) {
        return control.end(((args as { reason?: string }).reason ?? '').trim(), signal);
      },
    });
  }
  if (config.takeMessage) {
    tools.push({
      definition: {
        name: TAKE_MESSAGE_TOOL_NAME,
        description:
          'Take a message for the business when the caller wants to leave one (or nobody can help now). Ask for ' +
          'what is missing first: their name, a number to call back on, the message and how urgent it is. ' +
          'After calling it, tell the caller in one short sentence that the message will be passed on.',
        parameters: TAKE_MESSAGE_PARAMETERS,
      },
      async execute(args, { signal }) {
        const a = args as { callerName?: string; callbackNumber?: string; message: string; urgency?: string };
        const clean = (v: string | undefined) => (v?.trim() ? v.trim() : undefined);
        const message: TakenMessage = {
          ...(clean(a.callerName) ? { callerName: clean(a.callerName)! } : {}),
          ...(clean(a.callbackNumber) ? { callbackNumber: clean(a.callbackNumber)! } : {}),
          message: a.message.trim(),
          urgency: (a.urgency as TakenMessage['urgency'] | undefined) ?? 'normal',
        };
        return control.takeMessage(message, signal);
      },
    });
  }
  return tools;
}
