import {
  END_CALL_TOOL_NAME,
  TRANSFER_TOOL_NAME,
  type CallTools,
  type TransferTarget,
} from '../../../kernel/contracts/agents.ts';
import type { AgentToolHandler } from '../turn-runner.ts';

/**
 * What a live call lets the agent do to it. Both act after the reply that called the tool has been spoken, so
 * the model's "I'll put you through now" or "Goodbye" is heard first; each returns the tool result the model sees.
 */
export interface CallControl {
  /** `signal` is the turn's: a reply that is dropped (a prepared reply the caller talked over) never acts. */
  transfer(target: TransferTarget, summary: string, signal: AbortSignal): string;
  end(reason: string, signal: AbortSignal): string;
}

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
  return tools;
}
