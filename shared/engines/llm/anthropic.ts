import { EngineError } from '../../kernel/errors/engine-error.ts';
import { DEFAULT_MAX_TOKENS } from '../../contracts/agents.ts';
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

export interface AnthropicOptions {
  /** API root, e.g. `https://api.anthropic.com` (a trailing `/v1` is accepted too). */
  baseUrl: string;
  defaultModel: string;
  apiVersion?: string;
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

interface StreamEvent {
  type: string;
  index?: number;
  message?: { usage?: { input_tokens?: number; output_tokens?: number } };
  content_block?: { type: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: { input_tokens?: number; output_tokens?: number };
  error?: { type?: string; message?: string };
}

/**
 * Messages API over SSE (`POST /v1/messages`, `stream: true`): `message_start` (input usage),
 * `content_block_start` / `content_block_delta` (`text_delta` or `input_json_delta`) / `content_block_stop` per
 * block, `message_delta` (stop_reason, output usage), `message_stop`; `ping` and `error` may appear anywhere.
 * System messages go to the top-level `system`; tool results travel as `tool_result` blocks in a user message.
 */
export class AnthropicLlm extends LlmEngine {
  readonly provider = 'anthropic';
  readonly label = 'anthropic.llm';
  readonly defaultModel: string;
  readonly capabilities: LlmCapabilities = { streaming: true, tools: true, requiresKey: true };
  private readonly url: string;

  constructor(private readonly opts: AnthropicOptions) {
    super();
    if (!/^https?:\/\//.test(opts.baseUrl)) throw new Error('anthropic: base URL must be http(s)');
    this.defaultModel = opts.defaultModel;
    const root = trimSlash(opts.baseUrl).replace(/\/v1$/, '');
    this.url = `${root}/v1/messages`;
  }

  protected async *_stream(req: LlmRequest): AsyncGenerator<LlmEvent> {
    const system = req.messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    const body: Record<string, unknown> = {
      model: req.model || this.defaultModel,
      // The Messages API requires max_tokens on every request: the contract's default output cap.
      max_tokens: req.maxTokens ?? DEFAULT_MAX_TOKENS,
      messages: toWire(req.messages),
      stream: true,
    };
    if (system) body.system = system;
    // The Messages API accepts 0-1; the platform's 0-2 range is clamped.
    if (req.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, req.temperature));
    if (req.tools?.length) {
      body.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
      body.tool_choice = { type: req.toolChoice ?? 'auto' };
    }
    const headers: Record<string, string> = { 'anthropic-version': this.opts.apiVersion ?? '2023-06-01' };
    if (req.apiKey) headers['x-api-key'] = req.apiKey;

    const usage: LlmUsage = { inputTokens: 0, outputTokens: 0 };
    const tools = new Map<number, { id: string; name: string; json: string }>();
    let finish: LlmFinishReason = 'stop';
    for await (const sse of postForEvents(this.provider, this.url, headers, body, req.signal)) {
      const ev = parseJson<StreamEvent>(this.provider, sse.data);
      switch (ev.type) {
        case 'message_start':
          usage.inputTokens = ev.message?.usage?.input_tokens ?? 0;
          usage.outputTokens = ev.message?.usage?.output_tokens ?? 0;
          break;
        case 'content_block_start':
          if (ev.content_block?.type === 'tool_use') {
            tools.set(ev.index ?? 0, { id: ev.content_block.id ?? '', name: ev.content_block.name ?? '', json: '' });
          } else if (ev.content_block?.type === 'text' && ev.content_block.text) {
            yield { type: 'text', delta: ev.content_block.text };
          }
          break;
        case 'content_block_delta':
          if (ev.delta?.type === 'text_delta' && ev.delta.text) yield { type: 'text', delta: ev.delta.text };
          else if (ev.delta?.type === 'input_json_delta') {
            const t = tools.get(ev.index ?? 0);
            if (t) t.json += ev.delta.partial_json ?? '';
          }
          break;
        case 'content_block_stop': {
          const t = tools.get(ev.index ?? 0);
          if (t) {
            tools.delete(ev.index ?? 0);
            yield { type: 'tool_call', id: t.id, name: t.name, arguments: t.json || '{}' };
          }
          break;
        }
        case 'message_delta':
          if (ev.delta?.stop_reason) finish = mapStop(ev.delta.stop_reason);
          if (ev.usage?.output_tokens !== undefined) usage.outputTokens = ev.usage.output_tokens;
          if (ev.usage?.input_tokens) usage.inputTokens = ev.usage.input_tokens;
          break;
        case 'message_stop':
          yield { type: 'done', finishReason: finish, usage };
          return;
        case 'error':
          throw new EngineError(
            this.provider,
            ev.error?.type === 'overloaded_error' ? 'unavailable' : 'upstream',
            `anthropic: ${ev.error?.message ?? 'stream error'}`,
            true,
          );
        default:
          break; // ping and future event types
      }
    }
    throw new EngineError(this.provider, 'upstream', 'anthropic stream ended before message_stop', true);
  }
}

function mapStop(r: string): LlmFinishReason {
  if (r === 'end_turn' || r === 'stop_sequence') return 'stop';
  if (r === 'tool_use') return 'tool_calls';
  if (r === 'max_tokens') return 'length';
  return 'other';
}

/** Neutral messages → alternating user/assistant turns with content blocks (consecutive same-role merged). */
function toWire(messages: LlmMessage[]): { role: 'user' | 'assistant'; content: Block[] }[] {
  const out: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    if (!blocks.length) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'system') continue;
    if (m.role === 'user') push('user', [{ type: 'text', text: m.content }]);
    else if (m.role === 'tool') push('user', [{ type: 'tool_result', tool_use_id: m.toolCallId, content: m.content }]);
    else {
      const blocks: Block[] = [];
      if (m.content) blocks.push({ type: 'text', text: m.content });
      for (const c of m.toolCalls ?? [])
        blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: safeJson(c.arguments) });
      push('assistant', blocks);
    }
  }
  return out;
}

function safeJson(s: string): unknown {
  try {
    const v: unknown = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
