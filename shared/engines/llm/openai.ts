import { EngineError } from '../../kernel/errors/engine-error.ts';
import { trimSlash } from '../core/vendor-client.ts';
import { parseJson, postForEvents } from './sse.ts';
import {
  LlmEngine,
  type LlmCapabilities,
  type LlmEvent,
  type LlmFinishReason,
  type LlmMessage,
  type LlmRequest,
  type LlmUsage,
} from './types.ts';

export interface OpenAiCompatibleOptions {
  /** Vendor id (`openai`, `groq`): names errors and metrics. */
  provider: string;
  /** Base URL up to and including `/v1`, e.g. `https://api.openai.com/v1` or a vLLM/Ollama server. */
  baseUrl: string;
  defaultModel: string;
  /** Ask for a final usage chunk with `stream_options.include_usage` (OpenAI and most compatible servers). */
  includeUsageOption: boolean;
}

interface ChunkToolCall {
  index: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}
interface ChatChunk {
  choices?: {
    index: number;
    delta?: { content?: string | null; tool_calls?: ChunkToolCall[] };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  /** Groq reports usage here on the last chunk. */
  x_groq?: { usage?: { prompt_tokens?: number; completion_tokens?: number } };
  error?: { message?: string };
}

/**
 * Chat Completions over SSE (`POST {base}/chat/completions`, `stream: true`): `data: {chat.completion.chunk}`
 * lines, tool calls streamed as fragments keyed by `index` (id and name first, then argument pieces), a
 * `finish_reason`, an optional usage chunk with empty `choices`, then `data: [DONE]`. Any server speaking this
 * wire (vLLM, llama.cpp server, Ollama, Groq) works by pointing the base URL at it.
 */
export class OpenAiCompatibleLlm extends LlmEngine {
  readonly provider: string;
  readonly label: string;
  readonly defaultModel: string;
  readonly capabilities: LlmCapabilities = { streaming: true, tools: true, requiresKey: true };
  private readonly url: string;

  constructor(private readonly opts: OpenAiCompatibleOptions) {
    super();
    if (!/^https?:\/\//.test(opts.baseUrl)) throw new Error(`${opts.provider}: base URL must be http(s)`);
    this.provider = opts.provider;
    this.label = `${opts.provider}.llm`;
    this.defaultModel = opts.defaultModel;
    this.url = `${trimSlash(opts.baseUrl)}/chat/completions`;
  }

  protected async *_stream(req: LlmRequest): AsyncGenerator<LlmEvent> {
    const body: Record<string, unknown> = {
      model: req.model || this.defaultModel,
      messages: req.messages.map(toWire),
      stream: true,
    };
    if (this.opts.includeUsageOption) body.stream_options = { include_usage: true };
    const model = String(body.model);
    if (this.opts.provider === 'openai' && REASONING_MODEL.test(model)) {
      // OpenAI's reasoning models take max_completion_tokens and only the default temperature.
      if (req.maxTokens !== undefined) body.max_completion_tokens = req.maxTokens;
    } else {
      if (req.temperature !== undefined) body.temperature = req.temperature;
      if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
    }
    if (req.tools?.length) {
      body.tools = req.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      body.tool_choice = req.toolChoice ?? 'auto';
    }
    const headers: Record<string, string> = {};
    if (req.apiKey) headers.authorization = `Bearer ${req.apiKey}`;

    const pending = new Map<number, { id: string; name: string; arguments: string }>();
    let finish: LlmFinishReason = 'other';
    const usage: LlmUsage = { inputTokens: 0, outputTokens: 0 };
    let sawFinish = false;
    const flushTools = function* (): Generator<LlmEvent> {
      for (const [, c] of [...pending.entries()].sort((a, b) => a[0] - b[0])) {
        yield { type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments || '{}' };
      }
      pending.clear();
    };

    for await (const ev of postForEvents(this.provider, this.url, headers, body, req.signal)) {
      if (ev.data === '[DONE]') break;
      const chunk = parseJson<ChatChunk>(this.provider, ev.data);
      if (chunk.error) {
        throw new EngineError(this.provider, 'upstream', `${this.provider}: ${chunk.error.message ?? 'error'}`, true);
      }
      const u = chunk.usage ?? chunk.x_groq?.usage;
      if (u) {
        usage.inputTokens = u.prompt_tokens ?? usage.inputTokens;
        usage.outputTokens = u.completion_tokens ?? usage.outputTokens;
      }
      for (const choice of chunk.choices ?? []) {
        if (choice.index !== 0) continue;
        const delta = choice.delta;
        if (delta?.content) yield { type: 'text', delta: delta.content };
        for (const tc of delta?.tool_calls ?? []) {
          const cur = pending.get(tc.index) ?? { id: '', name: '', arguments: '' };
          if (tc.id) cur.id = tc.id;
          if (tc.function?.name) cur.name += tc.function.name;
          if (tc.function?.arguments) cur.arguments += tc.function.arguments;
          pending.set(tc.index, cur);
        }
        if (choice.finish_reason) {
          sawFinish = true;
          finish = mapFinish(choice.finish_reason);
          yield* flushTools();
        }
      }
    }
    // A server that closed without a finish_reason (some compatible servers do) ended normally.
    if (!sawFinish) finish = pending.size ? 'tool_calls' : 'stop';
    yield* flushTools();
    yield { type: 'done', finishReason: finish, usage };
  }
}

/** OpenAI models that reject `max_tokens` and a non-default `temperature` (o1, o3, o4-mini, gpt-5…). */
const REASONING_MODEL = /^(o\d|gpt-5)/;

function mapFinish(r: string): LlmFinishReason {
  if (r === 'stop') return 'stop';
  if (r === 'tool_calls' || r === 'function_call') return 'tool_calls';
  if (r === 'length') return 'length';
  return 'other';
}

function toWire(m: LlmMessage): Record<string, unknown> {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'assistant':
      return m.toolCalls?.length
        ? {
            role: 'assistant',
            content: m.content || null,
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : { role: 'assistant', content: m.content };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  }
}
