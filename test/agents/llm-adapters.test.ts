import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicLlm } from '../../shared/engines/llm/anthropic.ts';
import { OpenAiCompatibleLlm } from '../../shared/engines/llm/openai.ts';
import type { LlmEngine, LlmEvent, LlmRequest } from '../../shared/engines/llm/types.ts';
import { isEngineError } from '../../shared/kernel/errors/engine-error.ts';
import { startAnthropicDouble } from './doubles/anthropic-double.ts';
import type { Double } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import type { LlmScript } from '../../shared/domains/agent-tests/simulators/llm-script.ts';
import { startOpenAiChatDouble } from '../../shared/domains/agent-tests/simulators/openai-chat.ts';

/** One scripted conversation every adapter must handle the same way. */
const script: LlmScript = (body) => {
  const messages = (body.messages as unknown[]) ?? [];
  const text = JSON.stringify(messages);
  if (text.includes('FAIL401')) return { status: 401 };
  if (text.includes('FAIL500')) return { status: 500 };
  if (text.includes('weather') && !text.includes('tool_result') && !text.includes('"role":"tool"')) {
    return {
      text: 'Let me check.',
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'Paris', unit: 'c' } },
        { name: 'get_time', arguments: { tz: 'Europe/Paris' } },
      ],
      usage: { input: 20, output: 10 },
    };
  }
  return { text: 'Hello there, how can I help you today?', usage: { input: 12, output: 9 } };
};

const tools = [
  {
    name: 'get_weather',
    description: 'weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
  { name: 'get_time', description: 'time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } },
];

async function collect(engine: LlmEngine, req: Partial<LlmRequest>): Promise<LlmEvent[]> {
  const out: LlmEvent[] = [];
  for await (const ev of engine.stream({ model: 'm', messages: [], apiKey: 'sk-test', ...req })) out.push(ev);
  return out;
}

const doubles: Double[] = [];
const engines: Record<string, LlmEngine> = {};
beforeAll(async () => {
  const openai = await startOpenAiChatDouble(script);
  const groq = await startOpenAiChatDouble(script, { groq: true });
  const anthropic = await startAnthropicDouble(script);
  doubles.push(openai, groq, anthropic);
  engines.openai = new OpenAiCompatibleLlm({
    provider: 'openai',
    baseUrl: `${openai.url}/v1`,
    defaultModel: 'gpt-test',
    includeUsageOption: true,
  });
  engines.groq = new OpenAiCompatibleLlm({
    provider: 'groq',
    baseUrl: `${groq.url}/openai/v1`,
    defaultModel: 'llama-test',
    includeUsageOption: false,
  });
  engines.anthropic = new AnthropicLlm({ baseUrl: anthropic.url, defaultModel: 'claude-test' });
});
afterAll(async () => {
  await Promise.all(doubles.map((d) => d.close()));
});

describe.each(['openai', 'groq', 'anthropic'])('%s adapter', (name) => {
  it('streams text deltas and reports usage', async () => {
    const evs = await collect(engines[name]!, {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    const text = evs.flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('');
    expect(text).toBe('Hello there, how can I help you today?');
    expect(evs.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    const done = evs.at(-1)!;
    expect(done).toEqual({ type: 'done', finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 9 } });
  });

  it('assembles fragmented parallel tool calls and sends tool results back in the vendor format', async () => {
    const evs = await collect(engines[name]!, { messages: [{ role: 'user', content: 'weather in Paris?' }], tools });
    const calls = evs.filter((e) => e.type === 'tool_call');
    expect(calls.map((c) => c.type === 'tool_call' && [c.name, JSON.parse(c.arguments)])).toEqual([
      ['get_weather', { city: 'Paris', unit: 'c' }],
      ['get_time', { tz: 'Europe/Paris' }],
    ]);
    expect(evs.at(-1)).toMatchObject({
      type: 'done',
      finishReason: 'tool_calls',
      usage: { inputTokens: 20, outputTokens: 10 },
    });

    const first = calls[0]!;
    if (first.type !== 'tool_call') throw new Error('unreachable');
    const follow = await collect(engines[name]!, {
      tools,
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        {
          role: 'assistant',
          content: 'Let me check.',
          toolCalls: calls.map((c) =>
            c.type === 'tool_call' ? { id: c.id, name: c.name, arguments: c.arguments } : null!,
          ),
        },
        { role: 'tool', toolCallId: first.id, name: first.name, content: '{"temp":21}' },
        { role: 'tool', toolCallId: (calls[1] as { id: string }).id, name: 'get_time', content: '12:00' },
      ],
    });
    expect(follow.at(-1)).toMatchObject({ type: 'done', finishReason: 'stop' });
  });

  it('maps vendor statuses to engine errors with their retry policy', async () => {
    const e401 = await collect(engines[name]!, { messages: [{ role: 'user', content: 'FAIL401' }] }).catch((e) => e);
    expect(isEngineError(e401) && e401.kind).toBe('auth');
    expect(isEngineError(e401) && e401.retryable).toBe(false);
    const e500 = await collect(engines[name]!, { messages: [{ role: 'user', content: 'FAIL500' }] }).catch((e) => e);
    expect(isEngineError(e500) && e500.retryable).toBe(true);
  });

  it('stops when the signal aborts', async () => {
    const ac = new AbortController();
    ac.abort();
    const err = await collect(engines[name]!, { messages: [{ role: 'user', content: 'hi' }], signal: ac.signal }).catch(
      (e) => e,
    );
    expect(isEngineError(err) && err.kind).toBe('aborted');
  });
});

describe('wire formats', () => {
  it('openai: bearer key, stream_options, tools as functions, tool_choice, max_tokens', async () => {
    const d = doubles[0]!;
    const before = d.requests.length;
    await collect(engines.openai!, {
      messages: [{ role: 'user', content: 'hi' }],
      tools,
      toolChoice: 'none',
      temperature: 0.3,
      maxTokens: 77,
    });
    const rec = d.requests[before]!;
    expect(rec.path).toBe('/v1/chat/completions');
    expect(rec.headers.authorization).toBe('Bearer sk-test');
    expect(rec.json).toMatchObject({
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.3,
      max_tokens: 77,
      tool_choice: 'none',
      tools: [{ type: 'function', function: { name: 'get_weather' } }, { type: 'function' }],
    });
  });

  it('openai reasoning models get max_completion_tokens and no temperature', async () => {
    const d = doubles[0]!;
    const before = d.requests.length;
    await collect(engines.openai!, {
      model: 'o3-mini',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.3,
      maxTokens: 50,
    });
    const body = d.requests[before]!.json as Record<string, unknown>;
    expect(body.max_completion_tokens).toBe(50);
    expect(body.max_tokens).toBeUndefined();
    expect(body.temperature).toBeUndefined();
  });

  it('anthropic: x-api-key, version header, top-level system, tool_result blocks in a user turn, temperature clamped', async () => {
    const d = doubles[2]!;
    const before = d.requests.length;
    await collect(engines.anthropic!, {
      temperature: 1.6,
      tools,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'q' },
        { role: 'assistant', content: '', toolCalls: [{ id: 't1', name: 'get_time', arguments: '{"tz":"UTC"}' }] },
        { role: 'tool', toolCallId: 't1', name: 'get_time', content: 'noon' },
      ],
    });
    const rec = d.requests[before]!;
    expect(rec.headers['x-api-key']).toBe('sk-test');
    expect(rec.headers['anthropic-version']).toBe('2023-06-01');
    expect(rec.json).toMatchObject({
      system: 'Be brief.',
      max_tokens: 1024,
      temperature: 1,
      stream: true,
      tools: [{ name: 'get_weather', input_schema: { type: 'object' } }, { name: 'get_time' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_time', input: { tz: 'UTC' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'noon' }] },
      ],
    });
  });
});
