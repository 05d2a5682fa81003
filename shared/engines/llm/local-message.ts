import { spokenPhoneNumbers } from '../../kernel/spoken-phone.ts';
import type { LlmMessage, LlmRequest } from './types.ts';

/** The built-in tool the local engine fills field by field (its definition is the agents domain's). */
const TAKE_MESSAGE = 'take_message';

type Field = 'message' | 'callerName' | 'callbackNumber' | 'urgency';
const ORDER: Field[] = ['message', 'callerName', 'callbackNumber', 'urgency'];

/** What the local engine asks for each missing field: how it recognises, in the history, what it asked. */
export const MESSAGE_ASKS: Record<Field, string> = {
  message: 'Of course. What message would you like to leave?',
  callerName: 'May I have your name, please?',
  callbackNumber: 'What number should we call you back on?',
  urgency: 'Is it urgent, or can it wait?',
};

/** A caller who wants to leave a message ("can I leave a message", "take a message for Dr Lee"). */
const WANTS_TO_LEAVE = /\b(?:leave|take|give|pass on|send)\b[^.?!]{0,25}\bmessage\b|\bmessage for\b|\bvoice ?mail\b/i;
const NAME_INTRO = /\b(?:my name is|my name's|this is|it's|i am|i'm)\s+/i;
function phoneIn(text: string): string | null {
  return spokenPhoneNumbers(text)[0] ?? null;
}

function nameIn(text: string, asked: boolean): string | null {
  const intro = NAME_INTRO.exec(text);
  // Without an introduction only a direct answer to "May I have your name?" is a name.
  const rest = intro ? text.slice(intro.index + intro[0].length) : asked ? text : null;
  if (!rest) return null;
  const words = rest
    .replace(/[.,!?;:]+.*$/s, '')
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 3);
  return words.length ? words.join(' ') : null;
}

function urgencyIn(text: string): 'low' | 'normal' | 'high' {
  if (/\b(?:not (?:really )?urgent|no rush|no hurry|can wait|whenever|not important)\b/i.test(text)) return 'low';
  if (/\b(?:urgent|asap|as soon as possible|emergency|right away|important|today)\b/i.test(text)) return 'high';
  return 'normal';
}

/** Which ask an agent line was: the whole ask, or (a reply the caller cut) its first words. */
function askOf(content: string): Field | null {
  const said = content.trim();
  if (!said) return null;
  for (const f of ORDER) {
    const ask = MESSAGE_ASKS[f];
    if (said === ask || (said.split(/\s+/).length >= 2 && ask.startsWith(said))) return f;
  }
  return null;
}

/** What the local engine does next in a message being taken, or null when no message is being taken. */
export type MessageStep =
  | { kind: 'ask'; text: string }
  | { kind: 'call'; arguments: Record<string, string> }
  | { kind: 'confirm'; text: string };

/**
 * The local engine's `take_message` (issue #33), when the agent offers it: a caller who wants to leave a message is
 * asked for each missing field in turn (the message, their name, a number to call back on, its urgency); names and
 * numbers said along the way are kept. With every field known the engine calls the tool, as a model would, and then
 * confirms. The state is read from the conversation each time (the engine keeps none): the engine's own asks and
 * the caller's answers after them, since the last message taken.
 */
export function messageStep(req: LlmRequest): MessageStep | null {
  if (!req.tools?.some((t) => t.name === TAKE_MESSAGE)) return null;
  const msgs = req.messages;
  const last = msgs.at(-1);
  if (last?.role === 'tool' && last.name === TAKE_MESSAGE)
    return {
      kind: 'confirm',
      text: last.content.startsWith('{"error"') ? 'I am sorry, I could not take your message.' : confirmation(msgs),
    };
  if (last?.role !== 'user') return null;
  // The flow starts at the first "leave a message" since the last message taken.
  let from = -1;
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i]!;
    if (m.role === 'tool' && m.name === TAKE_MESSAGE) break;
    if (m.role === 'user' && WANTS_TO_LEAVE.test(m.content)) from = i;
  }
  if (from < 0) return null;
  const got: Partial<Record<Field, string>> = {};
  let asked: Field | null = null;
  for (const m of msgs.slice(from)) {
    if (m.role === 'assistant') {
      asked = askOf(m.content);
      continue;
    }
    if (m.role !== 'user') continue;
    const text = m.content.trim();
    if (asked === 'message' && text) got.message = text;
    if (asked === 'urgency') got.urgency = urgencyIn(text);
    if (asked === 'callbackNumber') got.callbackNumber = phoneIn(text) ?? text;
    got.callerName ??= nameIn(text, asked === 'callerName') ?? undefined;
    got.callbackNumber ??= phoneIn(text) ?? undefined;
    asked = null;
  }
  const missing = ORDER.find((f) => got[f] === undefined);
  if (missing) return { kind: 'ask', text: MESSAGE_ASKS[missing] };
  return { kind: 'call', arguments: got as Record<string, string> };
}

function confirmation(msgs: LlmMessage[]): string {
  const call = msgs.findLast((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.name === TAKE_MESSAGE));
  let name = '';
  try {
    const args = JSON.parse(
      (call as { toolCalls: { name: string; arguments: string }[] }).toolCalls.find((c) => c.name === TAKE_MESSAGE)!
        .arguments,
    ) as { callerName?: string };
    name = args.callerName ? `, ${args.callerName}` : '';
  } catch {
    // No readable arguments: thank the caller without a name.
  }
  return `Thank you${name}. I have taken your message and it will be passed on.`;
}
