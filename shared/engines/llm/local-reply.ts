import { LLM_PROVIDER_LABELS } from '../../contracts/providers.ts';
import { messageStep } from './local-message.ts';
import { LlmEngine, type LlmCapabilities, type LlmEvent, type LlmLookup, type LlmRequest } from './types.ts';

/** Provider id and model of the local reply engine (an agent's `llmProvider`/`llmModel`). */
export const LOCAL_REPLY_PROVIDER = 'local';
export const LOCAL_REPLY_MODEL = 'knowledge-lookup';
/** What the engine is, in words: shown in the portal and the API next to the provider id. */
export const LOCAL_REPLY_LABEL = LLM_PROVIDER_LABELS.local;

/** A spoken answer: at most this many words and sentences of the best passage. */
const MAX_WORDS = 45;
const MAX_SENTENCES = 2;

export const NO_ANSWER =
  "Sorry, I don't have an answer to that in my knowledge base. I am a simple lookup assistant, not a language model, so please ask about something it covers.";
export const NO_KNOWLEDGE =
  'I can only answer from a knowledge collection, and this agent has none attached. I am a simple lookup assistant, not a language model.';
const DEFAULT_GREETING = 'Hello! Ask me a question and I will look it up.';

const GREETING =
  /^(hi|hello|hey|hiya|howdy|good (morning|afternoon|evening|day)|greetings)( there)?( [a-z]+)?[\s.!,]*$/i;

// Words too common to say which sentence of a passage answers a question.
const STOPWORDS = new Set(
  (
    'a an the and or but if of to in on at by for with from as is are was were be been being do does did ' +
    'i you he she it we they me him her us them my your our their this that these those there here what when ' +
    'where which who whom whose why how can could would should will shall may might must have has had not no ' +
    'so than too very just any some about into over please tell know want like get'
  ).split(' '),
);

/**
 * The local reply engine: answers by looking up the agent's knowledge collection — the best-matching passage,
 * trimmed to a spoken-length answer — and greets with the agent's first message. It is not a language model
 * and says so: it follows no system prompt and says plainly when the knowledge has no answer. The one tool it calls
 * is the built-in `take_message`, when the agent offers it, after asking for each field in turn (local-message.ts).
 * Retrieval is lent per request (`LlmRequest.lookup`), so this engine imports no domain code. It streams word
 * by word like the model engines, so the voice loop, barge-in and traces run on it unchanged.
 */
export class LocalReplyLlm extends LlmEngine {
  readonly provider = LOCAL_REPLY_PROVIDER;
  readonly label = LOCAL_REPLY_LABEL;
  readonly defaultModel = LOCAL_REPLY_MODEL;
  readonly capabilities: LlmCapabilities = { streaming: true, tools: false, requiresKey: false };

  protected async *_stream(req: LlmRequest): AsyncGenerator<LlmEvent> {
    const question = lastUserMessage(req);
    // A message being taken (the agent offers take_message): ask for the next field, or call the tool.
    const step = req.toolChoice === 'none' ? null : messageStep(req);
    if (step?.kind === 'call') {
      const args = JSON.stringify(step.arguments);
      yield { type: 'tool_call', id: `local_${req.messages.length}`, name: 'take_message', arguments: args };
      yield {
        type: 'done',
        finishReason: 'tool_calls',
        usage: { inputTokens: Math.ceil(question.length / 4), outputTokens: Math.ceil(args.length / 4) },
      };
      return;
    }
    const reply = step ? step.text : await answer(question, req.lookup, req.signal);
    const words = reply.split(/\s+/).filter(Boolean);
    for (let i = 0; i < words.length; i++) {
      req.signal?.throwIfAborted();
      yield { type: 'text', delta: i === 0 ? words[i]! : ` ${words[i]!}` };
    }
    yield {
      type: 'done',
      finishReason: 'stop',
      // Token counts estimated as characters / 4, the same rule the chat endpoint holds credits with.
      usage: { inputTokens: Math.ceil(question.length / 4), outputTokens: Math.ceil(reply.length / 4) },
    };
  }
}

function lastUserMessage(req: LlmRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role === 'user') return m.content.trim();
  }
  return '';
}

async function answer(question: string, lookup: LlmLookup | undefined, signal?: AbortSignal): Promise<string> {
  if (!question || GREETING.test(question)) return lookup?.greeting?.trim() || DEFAULT_GREETING;
  if (!lookup?.search) return NO_KNOWLEDGE;
  const passages = await lookup.search(question.slice(0, 2000), signal ?? new AbortController().signal);
  const best = passages[0];
  if (!best || !best.content.trim()) return NO_ANSWER;
  // An FAQ entry (its document split by headings or questions): the answer alone, never its heading.
  const text =
    best.heading && best.content.startsWith(best.heading) ? best.content.slice(best.heading.length) : best.content;
  return spokenExcerpt(text, question);
}

/**
 * The sentences of `passage` that share most words with the question, in their original order, cut to a
 * spoken length (two sentences, 45 words). A passage short enough is said whole.
 */
export function spokenExcerpt(passage: string, question: string): string {
  const text = passage
    .replace(/[#*_`>|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const sentences = text.match(/[^.!?]+(?:[.!?]+(?=\s|$)|$)/g)?.map((s) => s.trim()) ?? [text];
  if (countWords(text) <= MAX_WORDS && sentences.length <= MAX_SENTENCES) return text;
  const terms = contentWords(question);
  const ranked = sentences
    .map((s, index) => ({ s, index, score: overlap(terms, contentWords(s)) }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, MAX_SENTENCES)
    .sort((a, b) => a.index - b.index);
  const words = ranked
    .map((r) => r.s)
    .join(' ')
    .split(' ');
  if (words.length <= MAX_WORDS) return words.join(' ');
  return `${words
    .slice(0, MAX_WORDS)
    .join(' ')
    .replace(/[,;:]$/, '')}…`;
}

function countWords(s: string): number {
  return s.split(/\s+/).filter(Boolean).length;
}

function contentWords(s: string): string[] {
  return (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOPWORDS.has(w));
}

/** Shared words between question and sentence; a shared 4-letter stem counts ("open" ~ "opening"). */
function overlap(question: string[], sentence: string[]): number {
  const stems = new Set(sentence.map((w) => w.slice(0, 4)));
  return new Set(question.filter((w) => stems.has(w.slice(0, 4)))).size;
}
