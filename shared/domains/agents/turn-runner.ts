import type { ToolCallRecord } from '../../contracts/agents.ts';
import type {
  LlmEngine,
  LlmFinishReason,
  LlmLookup,
  LlmMessage,
  LlmTool,
  LlmToolCall,
  LlmUsage,
} from '../../engines/llm/types.ts';
import { argumentProblem } from './tools/tool-schema.ts';

/** Longest tool result handed back to the model (the full text stays in the tool call record up to this too). */
export const MAX_TOOL_RESULT_CHARS = 8_000;

export interface ToolContext {
  toolCallId: string;
  /** Aborted when the turn is cancelled (barge-in, client gone) or the tool's own timeout passes. */
  signal: AbortSignal;
}

/**
 * A tool the model may call. `execute` only ever gets arguments that match `definition.parameters` (others are
 * a tool error the model sees) and returns the text handed back to the model; a throw becomes a tool error the
 * model sees (the turn goes on).
 */
export interface AgentToolHandler {
  definition: LlmTool;
  execute(args: unknown, ctx: ToolContext): Promise<string>;
}

export interface TurnOptions {
  engine: LlmEngine;
  model: string;
  /** System prompt, history and the new user message, in order. */
  messages: LlmMessage[];
  tools: AgentToolHandler[];
  temperature?: number;
  maxTokens?: number;
  apiKey?: string;
  /** The agent's knowledge search and first message, for engines that answer by lookup (the local reply engine). */
  lookup?: LlmLookup;
  /** At most this many tool steps (model responses that call tools); the next response must answer in text. */
  maxSteps: number;
  signal?: AbortSignal;
}

export interface TurnResult {
  /** Everything the assistant said this turn (text of every step). */
  reply: string;
  toolCalls: ToolCallRecord[];
  usage: LlmUsage;
  /** Tool steps taken. */
  steps: number;
  /** True when the tool budget ran out and the model was made to answer without tools. */
  stoppedAtMaxSteps: boolean;
  finishReason: LlmFinishReason;
  /** The messages this turn added after the input (assistant tool calls, tool results, final answer). */
  newMessages: LlmMessage[];
}

/**
 * Events of one turn, in order. `text` deltas stream as the model writes (speak them as they come);
 * `tool_call` when the model asked for a tool, `tool_result` once it ran; `done` last, with the whole turn.
 */
export type TurnEvent =
  | { type: 'text'; delta: string; step: number }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown; step: number }
  | { type: 'tool_result'; call: ToolCallRecord; step: number }
  | { type: 'done'; result: TurnResult };

/**
 * Runs one user turn: LLM → tools → LLM … until the model answers without calling tools or `maxSteps` tool
 * steps were used (then one last call with tool choice `none` makes it answer). Tools of one step run
 * concurrently. Cancel with `signal`: the LLM stream and running tools are aborted and the generator throws;
 * `tool_result` events already yielded are the results worth keeping.
 */
export async function* runTurn(opts: TurnOptions): AsyncGenerator<TurnEvent> {
  const byName = new Map(opts.tools.map((t) => [t.definition.name, t]));
  const definitions = opts.tools.map((t) => t.definition);
  const messages = [...opts.messages];
  const newMessages: LlmMessage[] = [];
  const toolCalls: ToolCallRecord[] = [];
  const usage: LlmUsage = { inputTokens: 0, outputTokens: 0 };
  const texts: string[] = [];
  let steps = 0;

  for (;;) {
    opts.signal?.throwIfAborted();
    const allowTools = definitions.length > 0 && steps < opts.maxSteps;
    let text = '';
    const calls: LlmToolCall[] = [];
    let finish: LlmFinishReason = 'stop';
    for await (const ev of opts.engine.stream({
      model: opts.model,
      messages,
      tools: definitions.length ? definitions : undefined,
      toolChoice: allowTools ? 'auto' : 'none',
      temperature: opts.temperature,
      maxTokens: opts.maxTokens,
      apiKey: opts.apiKey,
      lookup: opts.lookup,
      signal: opts.signal,
    })) {
      if (ev.type === 'text') {
        text += ev.delta;
        yield { type: 'text', delta: ev.delta, step: steps };
      } else if (ev.type === 'tool_call') {
        calls.push({ id: ev.id || `call_${steps}_${calls.length}`, name: ev.name, arguments: ev.arguments });
      } else {
        usage.inputTokens += ev.usage.inputTokens;
        usage.outputTokens += ev.usage.outputTokens;
        finish = ev.finishReason;
      }
    }
    if (text) texts.push(text);

    // No tool calls, or tools no longer allowed (calls made despite tool choice "none" are ignored).
    if (!allowTools || calls.length === 0) {
      const final: LlmMessage = { role: 'assistant', content: text };
      newMessages.push(final);
      yield {
        type: 'done',
        result: {
          reply: texts.join(' ').trim(),
          toolCalls,
          usage,
          steps,
          stoppedAtMaxSteps: !allowTools && definitions.length > 0,
          finishReason: finish === 'tool_calls' ? 'stop' : finish,
          newMessages,
        },
      };
      return;
    }

    steps++;
    const assistant: LlmMessage = { role: 'assistant', content: text, toolCalls: calls };
    messages.push(assistant);
    newMessages.push(assistant);
    const parsed = calls.map((c) => ({ call: c, args: parseArgs(c.arguments) }));
    for (const { call, args } of parsed) {
      yield {
        type: 'tool_call',
        id: call.id,
        name: call.name,
        arguments: args.ok ? args.value : call.arguments,
        step: steps,
      };
    }
    const records = await Promise.all(parsed.map(({ call, args }) => runTool(byName, call, args, opts.signal)));
    for (const rec of records) {
      toolCalls.push(rec);
      const content = rec.error ? JSON.stringify({ error: rec.error }) : (rec.result ?? '');
      const toolMsg: LlmMessage = { role: 'tool', toolCallId: rec.id, name: rec.name, content };
      messages.push(toolMsg);
      newMessages.push(toolMsg);
      yield { type: 'tool_result', call: rec, step: steps };
    }
  }
}

type Parsed = { ok: true; value: unknown } | { ok: false };

function parseArgs(raw: string): Parsed {
  try {
    const value: unknown = JSON.parse(raw || '{}');
    return { ok: true, value };
  } catch {
    return { ok: false };
  }
}

async function runTool(
  byName: Map<string, AgentToolHandler>,
  call: LlmToolCall,
  args: Parsed,
  signal: AbortSignal | undefined,
): Promise<ToolCallRecord> {
  const started = performance.now();
  const rec = (result: string | null, error: string | null): ToolCallRecord => ({
    id: call.id,
    name: call.name,
    arguments: args.ok ? args.value : call.arguments,
    result,
    durationMs: Math.round(performance.now() - started),
    error,
  });
  const tool = byName.get(call.name);
  if (!tool) return rec(null, `unknown tool "${call.name}"`);
  if (!args.ok) return rec(null, 'arguments are not valid JSON');
  // Checked here, not in each tool, so no tool (a developer's endpoint above all) sees arguments it did not declare.
  const problem = argumentProblem(tool.definition.parameters, args.value);
  if (problem) return rec(null, problem);
  try {
    const out = await tool.execute(args.value, { toolCallId: call.id, signal: signal ?? new AbortController().signal });
    return rec(out.length > MAX_TOOL_RESULT_CHARS ? out.slice(0, MAX_TOOL_RESULT_CHARS) : out, null);
  } catch (e) {
    if (signal?.aborted) throw e;
    return rec(null, (e as Error)?.message?.slice(0, 500) || 'tool failed');
  }
}
