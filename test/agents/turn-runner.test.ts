import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTurn, type AgentToolHandler, type TurnEvent } from '../../shared/domains/agents/turn-runner.ts';
import { OpenAiCompatibleLlm } from '../../shared/engines/llm/openai.ts';
import { parseSse } from '../../shared/engines/llm/sse.ts';
import type { Double } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import type { LlmScript } from '../../shared/domains/agent-tests/simulators/llm-script.ts';
import { startOpenAiChatDouble } from '../../shared/domains/agent-tests/simulators/openai-chat.ts';

let script: LlmScript = () => ({ text: 'ok' });
let double: Double;
let engine: OpenAiCompatibleLlm;
beforeAll(async () => {
  double = await startOpenAiChatDouble((b, i) => script(b, i));
  engine = new OpenAiCompatibleLlm({
    provider: 'openai',
    baseUrl: `${double.url}/v1`,
    defaultModel: 'm',
    includeUsageOption: true,
  });
});
afterAll(() => double?.close());

const hasToolResult = (b: Record<string, unknown>) => (b.messages as { role: string }[]).some((m) => m.role === 'tool');

function tool(name: string, run: (args: unknown, signal: AbortSignal) => Promise<string>): AgentToolHandler {
  return {
    definition: { name, description: name, parameters: { type: 'object', properties: {} } },
    execute: (args, ctx) => run(args, ctx.signal),
  };
}

describe('runTurn (the loop the chat endpoint and the voice pipeline share)', () => {
  it('yields text deltas as they stream, tool events in order, then done with summed usage', async () => {
    script = (b) =>
      hasToolResult(b)
        ? { text: 'It is sunny in Paris today.', usage: { input: 30, output: 8 } }
        : {
            text: 'Checking.',
            toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }],
            usage: { input: 20, output: 5 },
          };
    const events: TurnEvent[] = [];
    for await (const ev of runTurn({
      engine,
      model: 'm',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [tool('weather', async (args) => JSON.stringify({ sunny: true, args }))],
      maxSteps: 3,
    })) {
      events.push(ev);
    }
    const kinds = events.map((e) => e.type);
    expect(kinds.indexOf('tool_call')).toBeGreaterThan(kinds.indexOf('text'));
    expect(kinds.indexOf('tool_result')).toBeGreaterThan(kinds.indexOf('tool_call'));
    expect(kinds.filter((k) => k === 'text').length).toBeGreaterThan(3);
    const done = events.at(-1)!;
    if (done.type !== 'done') throw new Error('no done');
    expect(done.result.reply).toBe('Checking. It is sunny in Paris today.');
    expect(done.result.usage).toEqual({ inputTokens: 50, outputTokens: 13 });
    expect(done.result.steps).toBe(1);
    expect(done.result.toolCalls[0]).toMatchObject({ name: 'weather', arguments: { city: 'Paris' }, error: null });
    expect(done.result.newMessages.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
  });

  it('invalid JSON arguments and unknown tools become tool errors the model sees', async () => {
    script = (b) => (hasToolResult(b) ? { text: 'fine' } : { toolCalls: [{ name: 'nope', arguments: {} }] });
    const events: TurnEvent[] = [];
    for await (const ev of runTurn({
      engine,
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [tool('weather', async () => '')],
      maxSteps: 2,
    })) {
      events.push(ev);
    }
    const done = events.at(-1)!;
    if (done.type !== 'done') throw new Error('no done');
    expect(done.result.toolCalls[0]!.error).toMatch(/unknown tool/);
    const toolMsg = double.requests.at(-1)!.json as { messages: { role: string; content: string }[] };
    expect(toolMsg.messages.find((m) => m.role === 'tool')!.content).toContain('unknown tool');
  });

  it('arguments that do not match the tool’s parameters never reach execute; the turn goes on', async () => {
    script = (b) =>
      hasToolResult(b) ? { text: 'Which city?' } : { toolCalls: [{ name: 'weather', arguments: { city: 5 } }] };
    const received: unknown[] = [];
    const weather: AgentToolHandler = {
      definition: {
        name: 'weather',
        description: 'weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      execute: async (args) => {
        received.push(args);
        return 'sunny';
      },
    };
    const events: TurnEvent[] = [];
    for await (const ev of runTurn({
      engine,
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [weather],
      maxSteps: 2,
    })) {
      events.push(ev);
    }
    const done = events.at(-1)!;
    if (done.type !== 'done') throw new Error('no done');
    expect(received).toEqual([]);
    expect(done.result.reply).toBe('Which city?');
    expect(done.result.toolCalls[0]).toMatchObject({
      arguments: { city: 5 },
      result: null,
      error: "arguments do not match the tool's parameters: city must be string",
    });
  });

  it('cancels a running tool and the turn when the signal aborts (barge-in)', async () => {
    script = () => ({ toolCalls: [{ name: 'slow', arguments: {} }] });
    const ac = new AbortController();
    let toolSawAbort = false;
    const slow = tool(
      'slow',
      (_a, signal) =>
        new Promise<string>((_ok, fail) => {
          signal.addEventListener('abort', () => {
            toolSawAbort = true;
            fail(signal.reason);
          });
        }),
    );
    const seen: string[] = [];
    const run = (async () => {
      for await (const ev of runTurn({
        engine,
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        tools: [slow],
        maxSteps: 2,
        signal: ac.signal,
      })) {
        seen.push(ev.type);
        if (ev.type === 'tool_call') setTimeout(() => ac.abort(), 20);
      }
    })();
    await expect(run).rejects.toBeTruthy();
    expect(toolSawAbort).toBe(true);
    expect(seen).toContain('tool_call');
    expect(seen).not.toContain('done');
  });
});

describe('parseSse', () => {
  it('handles CRLF split across chunks, multi-line data, comments and event names', async () => {
    const raw = ': comment\r\nevent: a\r\ndata: one\r\ndata: two\r\n\r\ndata: {"x":1}\n\n';
    const bytes = new TextEncoder().encode(raw);
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 3) yield bytes.slice(i, i + 3);
    }
    const out = [];
    for await (const ev of parseSse(chunks())) out.push(ev);
    expect(out).toEqual([
      { event: 'a', data: 'one\ntwo' },
      { event: undefined, data: '{"x":1}' },
    ]);
  });

  it('delivers an event the stream cut off before its blank line, and a multi-byte character split across chunks', async () => {
    const bytes = new TextEncoder().encode('data: é\n\nevent: end\ndata: [DONE]');
    async function* chunks() {
      for (let i = 0; i < bytes.length; i++) yield bytes.slice(i, i + 1);
    }
    const out = [];
    for await (const ev of parseSse(chunks())) out.push(ev);
    expect(out).toEqual([
      { event: undefined, data: 'é' },
      { event: 'end', data: '[DONE]' },
    ]);
  });
});
