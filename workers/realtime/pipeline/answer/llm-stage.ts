import type { AgentRuntime } from '../../../../shared/domains/agents/runtime.ts';
import { runTurn } from '../../../../shared/domains/agents/turn-runner.ts';
import type { Conversation } from '../conversation.ts';
import type { DataFrame } from '../frames.ts';
import { Stage } from '../stage.ts';

/**
 * user-turn → llm-text deltas → llm-done. Runs the agent's turn (same prompt, tools and knowledge as chat) on the
 * conversation's history, with the stage's AbortSignal, so a barge-in cancels the LLM stream and running tools.
 * Completed tool calls and results are kept on the reply at once, so a cancellation never loses them; each tool run
 * and the vendor's usage go on as `tool` and `usage` frames. The first token's time and the characters written are
 * stamped on the reply (the turn's trace).
 */
export class LlmStage extends Stage {
  constructor(
    private readonly runtime: AgentRuntime,
    private readonly conv: Pick<Conversation, 'history' | 'turn' | 'now' | 'pendingIdx'>,
    private readonly maxSteps = 5,
  ) {
    super('llm');
  }

  protected override async onData(frame: DataFrame, signal: AbortSignal): Promise<void> {
    if (frame.kind !== 'user-turn') return this.emit(frame);
    const { turnId } = frame;
    const started = this.conv.now();
    let first = true;
    const pendingCalls = new Map<string, { name: string; arguments: string }>();
    let stepText = '';
    try {
      const opts = this.runtime.turn(this.conv.history, frame.text);
      for await (const ev of runTurn({ ...opts, maxSteps: this.maxSteps, signal })) {
        if (signal.aborted) return;
        if (ev.type === 'text') {
          const t = this.conv.turn(turnId);
          if (first) {
            first = false;
            if (t && t.firstTokenAt === null) t.firstTokenAt = this.conv.now();
          }
          stepText += ev.delta;
          if (t) t.llmChars += ev.delta.length;
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
          const t = this.conv.turn(turnId);
          this.emit({ kind: 'tool', turnIdx: t?.idx ?? this.conv.pendingIdx, call: c, atMs: this.conv.now() });
          t?.kept.push(
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
          );
          stepText = '';
        } else {
          const u = ev.result.usage;
          this.emit({ kind: 'usage', category: 'llm', units: u.inputTokens + u.outputTokens });
        }
      }
      this.emit({ kind: 'llm-done', turnId, llmMs: Math.round(this.conv.now() - started) });
    } catch (e) {
      if (signal.aborted) return;
      const msg = (e as Error).message ?? 'error';
      this.emit({ kind: 'llm-done', turnId, llmMs: Math.round(this.conv.now() - started), error: `llm: ${msg}` });
    }
  }
}
