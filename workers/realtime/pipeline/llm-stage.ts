import type { ToolCallRecord } from '../../../shared/kernel/contracts/agents.ts';
import type { LlmMessage, LlmUsage } from '../../../shared/engines/llm/types.ts';
import type { AgentRuntime } from '../../../shared/domains/agents/runtime.ts';
import { runTurn } from '../../../shared/domains/agents/turn-runner.ts';
import type { DataFrame } from './frames.ts';
import { Stage } from './stage.ts';

/** What the LLM stage reports to the session beside its frames. */
export interface LlmStageHooks {
  /** History before the new user message (without the system prompt). */
  history(): LlmMessage[];
  /** Messages that must be kept even if the turn is cancelled later (a completed tool call and its result). */
  keep(turnId: string, messages: LlmMessage[]): void;
  toolExecuted(turnId: string, rec: ToolCallRecord): void;
  firstToken(turnId: string, atMs: number): void;
  /** Characters of text the model wrote for the turn (what a cancelled reply cost, before any usage report). */
  textOut?(turnId: string, chars: number): void;
  usage(turnId: string, usage: LlmUsage): void;
  now(): number;
}

/**
 * user-turn → llm-text deltas → llm-done. Runs the agent's turn (same prompt, tools and knowledge as chat)
 * with the stage's AbortSignal, so a barge-in cancels the LLM stream and running tools. Completed tool results are
 * handed to the session at once (`keep`), so a cancellation never loses them.
 */
export class LlmStage extends Stage {
  constructor(
    private readonly runtime: AgentRuntime,
    private readonly hooks: LlmStageHooks,
    private readonly maxSteps = 5,
  ) {
    super('llm');
  }

  protected override async onData(frame: DataFrame, signal: AbortSignal): Promise<void> {
    if (frame.kind !== 'user-turn') return this.emit(frame);
    const { turnId } = frame;
    const started = this.hooks.now();
    let first = true;
    const pendingCalls = new Map<string, { name: string; arguments: string }>();
    let stepText = '';
    try {
      const opts = this.runtime.turn(this.hooks.history(), frame.text);
      for await (const ev of runTurn({ ...opts, maxSteps: this.maxSteps, signal })) {
        if (signal.aborted) return;
        if (ev.type === 'text') {
          if (first) {
            first = false;
            this.hooks.firstToken(turnId, this.hooks.now());
          }
          stepText += ev.delta;
          this.hooks.textOut?.(turnId, ev.delta.length);
          this.emit({ kind: 'llm-text', turnId, text: ev.delta });
        } else if (ev.type === 'tool_call') {
          pendingCalls.set(ev.id, {
            name: ev.name,
            arguments: typeof ev.arguments === 'string' ? ev.arguments : JSON.stringify(ev.arguments ?? {}),
          });
        } else if (ev.type === 'tool_result') {
          const c = ev.call;
          const call = pendingCalls.get(c.id);
          pendingCalls.delete(c.id);
          this.hooks.toolExecuted(turnId, c);
          this.hooks.keep(turnId, [
            {
              role: 'assistant',
              content: stepText,
              toolCalls: [{ id: c.id, name: c.name, arguments: call?.arguments ?? '{}' }],
            },
            {
              role: 'tool',
              toolCallId: c.id,
              name: c.name,
              content: c.error ? JSON.stringify({ error: c.error }) : (c.result ?? ''),
            },
          ]);
          stepText = '';
        } else {
          this.hooks.usage(turnId, ev.result.usage);
        }
      }
      this.emit({ kind: 'llm-done', turnId, llmMs: Math.round(this.hooks.now() - started) });
    } catch (e) {
      if (signal.aborted) return;
      const msg = (e as Error).message ?? 'error';
      this.emit({ kind: 'llm-done', turnId, llmMs: Math.round(this.hooks.now() - started), error: `llm: ${msg}` });
    }
  }
}
