import { KNOWLEDGE_TOOL_NAME } from '../../contracts/agents.ts';
import type { LlmMessage } from '../../engines/llm/types.ts';

export type ContextVars = Record<string, string | number | boolean>;

export interface PromptInput {
  systemPrompt: string;
  language: string;
  /** The selected agent instance's context variables, if any. */
  context?: ContextVars | null;
  /** The agent's defaults for template variables the context does not give. */
  defaults?: Record<string, string> | null;
  hasKnowledge: boolean;
  /** Extra instruction lines from the caller (the realtime pipeline adds voice-specific ones). */
  extra?: string[];
}

/** A `{{name}}` in a template (the names variables and agent defaults may use). */
const TEMPLATE_VAR = /(\s*)\{\{\s*([A-Za-z0-9_.-]{1,64})\s*\}\}/g;

/**
 * Replaces `{{name}}` with the variable of that name (the call's variables, the instance context), else the
 * default the agent declares for it (`variables: {name: {default: "there"}}`). A name with neither is left out,
 * braces and the space before it included: "Hello {{name}}, …" becomes "Hello, …", never read aloud as braces.
 */
export function fillTemplate(
  text: string,
  context: ContextVars | null | undefined,
  defaults?: Record<string, string> | null,
): string {
  return text.replace(TEMPLATE_VAR, (_whole, space: string, key: string) => {
    if (context && Object.hasOwn(context, key)) return space + String(context[key]);
    if (defaults && Object.hasOwn(defaults, key)) return space + defaults[key]!;
    return '';
  });
}

/** The defaults an agent declares for its template variables (`variables: {name: {default}}`), by name. */
export function templateDefaults(
  variables: Record<string, { default: string }> | null | undefined,
): Record<string, string> | null {
  if (!variables) return null;
  return Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, v.default]));
}

/**
 * The system message of a turn: the agent's prompt (with `{{variables}}` filled from the instance context),
 * the reply language, the caller's context as a list, and how to use the knowledge tool.
 */
export function buildSystemPrompt(p: PromptInput): string {
  const parts: string[] = [];
  const base = fillTemplate(p.systemPrompt, p.context, p.defaults).trim();
  parts.push(base || 'You are a helpful assistant.');
  parts.push(`Reply in the language with code "${p.language}" unless the user asks for another.`);
  if (p.context && Object.keys(p.context).length) {
    const lines = Object.entries(p.context).map(([k, v]) => `- ${k}: ${String(v)}`);
    parts.push(`Context about the person you are talking with:\n${lines.join('\n')}`);
  }
  if (p.hasKnowledge) {
    parts.push(
      `You have a knowledge base. Call the ${KNOWLEDGE_TOOL_NAME} tool to look up facts before answering questions it may cover, and base your answer on what it returns.`,
    );
  }
  for (const line of p.extra ?? []) parts.push(line);
  return parts.join('\n\n');
}

/** History turns as alternating user/assistant messages. */
export interface HistoryTurn {
  userMessage: string;
  reply: string;
}

export function buildMessages(system: string, history: HistoryTurn[], userMessage: string): LlmMessage[] {
  const out: LlmMessage[] = [{ role: 'system', content: system }];
  for (const t of history) {
    out.push({ role: 'user', content: t.userMessage });
    out.push({ role: 'assistant', content: t.reply });
  }
  out.push({ role: 'user', content: userMessage });
  return out;
}
