import { EngineError } from '../../kernel/errors/engine-error.ts';
import { engineLatency, engineTtfb } from '../core/metrics.ts';

/** One tool call the model asked for. `arguments` is the JSON text the model produced (may be invalid JSON). */
export interface LlmToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Provider-neutral chat messages; adapters translate them to each vendor's wire format. */
export type LlmMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

/** A function the model may call: `parameters` is a JSON Schema object (`{type: 'object', properties, …}`). */
export interface LlmTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface LlmRequest {
  model: string;
  messages: LlmMessage[];
  tools?: LlmTool[];
  /** `none` forbids tool calls for this request (tools stay declared so tool history stays valid). */
  toolChoice?: 'auto' | 'none';
  temperature?: number;
  maxTokens?: number;
  /** The resolved provider key (caller header, stored key or platform key). */
  apiKey?: string;
  /** Lent to engines that answer by lookup rather than with a model (the local reply engine); models ignore it. */
  lookup?: LlmLookup;
  signal?: AbortSignal;
}

/** A passage of the caller's knowledge, best first. */
export interface LlmPassage {
  content: string;
  score: number;
  /** An FAQ entry's heading or question (the passage starts with it): an answer read aloud leaves it out. */
  heading?: string;
}

/**
 * Knowledge the caller (the agents domain) injects into a request, so an engine that looks answers up never
 * imports retrieval code itself: a search over the agent's collection (absent when none is attached) and the
 * agent's first message, said in answer to a greeting.
 */
export interface LlmLookup {
  search?: (query: string, signal: AbortSignal) => Promise<LlmPassage[]>;
  greeting?: string;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
}

export type LlmFinishReason = 'stop' | 'tool_calls' | 'length' | 'other';

/**
 * What a streamed completion yields, in order: text deltas as they arrive, each tool call once it is complete
 * (arguments fully assembled), then exactly one `done` with the token usage.
 */
export type LlmEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'done'; finishReason: LlmFinishReason; usage: LlmUsage };

export interface LlmCapabilities {
  streaming: boolean;
  tools: boolean;
  requiresKey: boolean;
}

/**
 * Base of every LLM adapter: metrics (latency, time to first token) and error normalisation live here;
 * adapters implement `_stream`. `label` names the adapter honestly, e.g. `openai.llm`.
 */
export abstract class LlmEngine {
  abstract readonly provider: string;
  abstract readonly label: string;
  abstract readonly capabilities: LlmCapabilities;
  /** Model used when the caller gives none. */
  abstract readonly defaultModel: string;
  protected abstract _stream(req: LlmRequest): AsyncIterable<LlmEvent>;

  async *stream(req: LlmRequest): AsyncGenerator<LlmEvent> {
    const started = performance.now();
    const done = engineLatency.startTimer({ capability: 'llm', provider: this.provider });
    let first = true;
    let finished = false;
    try {
      for await (const ev of this._stream(req)) {
        if (first && ev.type !== 'done') {
          engineTtfb.observe({ capability: 'llm', provider: this.provider }, (performance.now() - started) / 1000);
          first = false;
        }
        if (ev.type === 'done') finished = true;
        yield ev;
      }
      if (!finished) throw new EngineError(this.provider, 'upstream', `${this.provider} stream ended early`, true);
      done({ outcome: 'ok' });
    } catch (e) {
      done({ outcome: 'error' });
      if (req.signal?.aborted) throw new EngineError(this.provider, 'aborted', 'aborted', false);
      throw e instanceof EngineError ? e : EngineError.network(this.provider, e);
    }
  }

  /** Collects a whole completion (non-streaming callers). */
  async complete(
    req: LlmRequest,
  ): Promise<{ text: string; toolCalls: LlmToolCall[]; finishReason: LlmFinishReason; usage: LlmUsage }> {
    let text = '';
    const toolCalls: LlmToolCall[] = [];
    for await (const ev of this.stream(req)) {
      if (ev.type === 'text') text += ev.delta;
      else if (ev.type === 'tool_call') toolCalls.push({ id: ev.id, name: ev.name, arguments: ev.arguments });
      else return { text, toolCalls, finishReason: ev.finishReason, usage: ev.usage };
    }
    throw new EngineError(this.provider, 'upstream', `${this.provider} stream ended early`, true);
  }
}
