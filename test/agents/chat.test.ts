import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../shared/domains/webhooks/standard-webhooks.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { startAnthropicDouble } from './doubles/anthropic-double.ts';
import type { Double, Recorded } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import type { LlmScript, ScriptedReply } from '../../shared/domains/agent-tests/simulators/llm-script.ts';
import { startOpenAiChatDouble } from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startToolServer } from './doubles/tool-server.ts';

type Json = Record<string, unknown>;
type Msg = { role: string; content: unknown; tool_calls?: unknown[] };

/** The script the LLM doubles follow; each test sets its own. */
let script: LlmScript = () => ({ text: 'ok' });
const delegate: LlmScript = (b, i) => script(b, i);

let p: TestPlatform;
let openai: Double;
let groq: Double;
let anthropic: Double;
let tools: Double;
let dev: { apiKey: string; developerId: string };

beforeAll(async () => {
  openai = await startOpenAiChatDouble(delegate);
  groq = await startOpenAiChatDouble(delegate, { groq: true });
  anthropic = await startAnthropicDouble(delegate);
  tools = await startToolServer((rec) => {
    // Far longer than any turn takes, however loaded the machine: only the tool's own timeout ends its wait.
    if (rec.path === '/slow') return { body: '{"late":true}', delayMs: 30_000 };
    if (rec.path === '/broken') return { status: 503, body: 'down' };
    return { body: JSON.stringify({ status: 'shipped', echo: (rec.json as Json)?.data }) };
  });
  p = await startTestPlatform({
    roles: ['api'],
    env: {
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      OPENAI_API_KEY: 'sk-platform-openai',
      GROQ_BASE_URL: `${groq.url}/openai/v1`,
      GROQ_API_KEY: 'gsk-platform',
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: 'sk-ant-platform',
    },
  });
  dev = await p.developer('pro');
});
afterAll(async () => {
  await p?.close();
  await Promise.all([openai, groq, anthropic, tools].map((d) => d?.close()));
});

async function agent(json: Json, key = dev.apiKey): Promise<Json> {
  const res = await p.request('/v1/agents', { method: 'POST', key, json });
  expect(res.status).toBe(201);
  return (await res.json()) as Json;
}

async function chat(agentId: unknown, json: Json, headers: Record<string, string> = {}) {
  const res = await p.request(`/v1/agents/${agentId}/chat`, { method: 'POST', key: dev.apiKey, json, headers });
  return { res, body: (await res.json()) as Json };
}

const messagesOf = (r: Recorded) => ((r.json as Json).messages ?? []) as Msg[];
const lastUser = (b: Json) => {
  const ms = (b.messages as Msg[]).filter((m) => m.role === 'user');
  return String(ms[ms.length - 1]?.content ?? '');
};
const toolResults = (b: Json) => (b.messages as Msg[]).filter((m) => m.role === 'tool');

describe('chat', () => {
  it('remembers earlier turns of a conversation and counts turns', async () => {
    script = (b) => {
      const all = JSON.stringify(b.messages);
      const name = /My name is (\w+)/.exec(all)?.[1];
      if (lastUser(b).includes('What is my name')) return { text: name ? `Your name is ${name}.` : 'I do not know.' };
      return { text: 'Nice to meet you.' };
    };
    const a = await agent({ name: 'Memory', systemPrompt: 'You are terse.' });
    const t1 = await chat(a.id, { message: 'My name is Zed.' });
    expect(t1.res.status).toBe(200);
    expect(t1.body).toMatchObject({ reply: 'Nice to meet you.', turnIndex: 0, toolCalls: [] });
    expect(t1.body.conversationId).toMatch(/^cnv_/);
    const t2 = await chat(a.id, { message: 'What is my name?', conversationId: t1.body.conversationId });
    expect(t2.body).toMatchObject({ reply: 'Your name is Zed.', turnIndex: 1, conversationId: t1.body.conversationId });
    const t3 = await chat(a.id, { message: 'What is my name?', conversationId: t1.body.conversationId });
    expect(t3.body.turnIndex).toBe(2);
    const sent = messagesOf(openai.requests.at(-1)!);
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(sent[0]!.content).toContain('You are terse.');
    // A new conversation knows nothing.
    const fresh = await chat(a.id, { message: 'What is my name?' });
    expect(fresh.body).toMatchObject({ reply: 'I do not know.', turnIndex: 0 });
    expect(fresh.body.conversationId).not.toBe(t1.body.conversationId);
  });

  it('concurrent turns on one conversation each get their own turnIndex', async () => {
    script = () => ({ text: 'ok' });
    const a = await agent({ name: 'Busy' });
    const first = await chat(a.id, { message: 'start' });
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => chat(a.id, { message: 'again', conversationId: first.body.conversationId })),
    );
    expect(results.map((r) => r.res.status)).toEqual([200, 200, 200, 200]);
    expect(results.map((r) => r.body.turnIndex as number).sort()).toEqual([1, 2, 3, 4]);
  });

  it('conversation history stays readable, also after the agent is archived', async () => {
    script = (b) => ({ text: `echo ${lastUser(b)}` });
    const a = await agent({ name: 'History' });
    const t1 = await chat(a.id, { message: 'one' });
    await chat(a.id, { message: 'two', conversationId: t1.body.conversationId });
    await chat(a.id, { message: 'other conversation' });
    expect((await p.request(`/v1/agents/${a.id}`, { method: 'DELETE', key: dev.apiKey })).status).toBe(204);

    const list = (await (await p.request(`/v1/agents/${a.id}/conversations`, { key: dev.apiKey })).json()) as {
      data: Json[];
    };
    expect(list.data).toHaveLength(2);
    expect(list.data[1]).toMatchObject({ id: t1.body.conversationId, turnCount: 2 });
    expect(list.data[1]).not.toHaveProperty('instanceId');
    const conv = (await (
      await p.request(`/v1/agents/${a.id}/conversations/${t1.body.conversationId}`, { key: dev.apiKey })
    ).json()) as { turns: Json[] };
    expect(conv.turns.map((t) => [t.turnIndex, t.message, t.reply])).toEqual([
      [0, 'one', 'echo one'],
      [1, 'two', 'echo two'],
    ]);
    const other = await p.developer();
    const hidden = await p.request(`/v1/agents/${a.id}/conversations/${t1.body.conversationId}`, { key: other.apiKey });
    expect(hidden.status).toBe(404);
  });

  it('404 for a conversation that is not this agent’s', async () => {
    script = () => ({ text: 'hi' });
    const a = await agent({ name: 'A' });
    const b = await agent({ name: 'B' });
    const t = await chat(a.id, { message: 'hello' });
    const wrong = await chat(b.id, { message: 'hello', conversationId: t.body.conversationId });
    expect(wrong.res.status).toBe(404);
    expect((wrong.body.error as Json).param).toBe('conversationId');
    expect((await chat(a.id, { message: 'x', conversationId: 'cnv_nope' })).res.status).toBe(404);
  });

  it('sends the agent’s system prompt, language, temperature and maxTokens; reports usage and provider', async () => {
    script = () => ({ text: 'Bonjour', usage: { input: 31, output: 4 } });
    const a = await agent({
      name: 'Fr',
      systemPrompt: 'Be French.',
      language: 'fr',
      temperature: 1.3,
      maxTokens: 321,
      llmModel: 'my-model',
    });
    const before = openai.requests.length;
    const { res, body } = await chat(a.id, { message: 'Salut' });
    expect(body).toMatchObject({ reply: 'Bonjour', usage: { inputTokens: 31, outputTokens: 4 } });
    expect(res.headers.get('x-provider-used')).toBe('openai');
    const rec = openai.requests[before]!;
    expect(rec.headers.authorization).toBe('Bearer sk-platform-openai');
    expect(rec.json).toMatchObject({ model: 'my-model', temperature: 1.3, max_tokens: 321, stream: true });
    const system = String(messagesOf(rec)[0]!.content);
    expect(system).toContain('Be French.');
    expect(system).toContain('"fr"');
    expect((rec.json as Json).tools).toBeUndefined();
  });

  it('uses the caller’s own key from X-Provider-Key-OpenAI and does not meter it', async () => {
    script = () => ({ text: 'byok' });
    const a = await agent({ name: 'Byok' });
    const before = openai.requests.length;
    const { res } = await chat(a.id, { message: 'hi' }, { 'X-Provider-Key-OpenAI': 'sk-caller' });
    expect(res.status).toBe(200);
    expect(openai.requests[before]!.headers.authorization).toBe('Bearer sk-caller');
    expect(res.headers.get('x-usage-bypassed')).toBe('true');
  });

  it.each([
    ['anthropic', () => anthropic],
    ['groq', () => groq],
  ])('runs through the %s adapter', async (provider, double) => {
    script = (b) => {
      const tr = JSON.stringify(b.messages).includes('tool_result') || toolResults(b).length > 0;
      if (!tr) return { toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'Q9' } }] };
      return { text: `Done via ${provider}`, usage: { input: 5, output: 3 } };
    };
    const a = await agent({
      name: provider,
      llmProvider: provider,
      tools: [{ name: 'lookup_order', description: 'Order status', url: `${tools.url}/order` }],
    });
    const before = double().requests.length;
    const { res, body } = await chat(a.id, { message: 'Where is my order?' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-provider-used')).toBe(provider);
    expect(body.reply).toBe(`Done via ${provider}`);
    expect((body.toolCalls as Json[])[0]).toMatchObject({ name: 'lookup_order', arguments: { orderId: 'Q9' } });
    expect((body.toolCalls as Json[])[0]).not.toHaveProperty('error');
    expect(double().requests.length - before).toBe(2);
  });

  it('knowledge tool searches the attached collection and the reply uses what it found', async () => {
    const col = (await (
      await p.request('/v1/collections', { method: 'POST', key: dev.apiKey, json: { name: 'kb' } })
    ).json()) as Json;
    const ing = await p.request(`/v1/collections/${col.id}/ingest`, {
      method: 'POST',
      key: dev.apiKey,
      json: {
        content:
          'Zorblax warranty policy. Every Zorblax vacuum comes with a warranty that lasts 37 months from the date of purchase. ' +
          'Returns are accepted within 14 days. Shipping to Iceland takes nine business days.',
      },
    });
    expect(ing.status).toBe(201);
    script = (b) => {
      const results = toolResults(b);
      if (!results.length)
        return {
          text: 'Let me look that up.',
          toolCalls: [{ name: 'search_knowledge', arguments: { query: 'Zorblax warranty' } }],
        };
      const found = /lasts (\d+ months)/.exec(String(results[0]!.content))?.[1];
      return { text: found ? `The warranty lasts ${found}.` : 'I could not find it.' };
    };
    const a = await agent({ name: 'Kb', collectionId: col.id });
    const before = openai.requests.length;
    const { res, body } = await chat(a.id, { message: 'How long is the Zorblax warranty?' });
    expect(res.status).toBe(200);
    expect(body.reply).toContain('The warranty lasts 37 months.');
    const call = (body.toolCalls as Json[])[0]!;
    expect(call).toMatchObject({ name: 'search_knowledge', arguments: { query: 'Zorblax warranty' } });
    expect(call).not.toHaveProperty('error');
    expect(String(call.result)).toContain('37 months');
    expect(call.durationMs).toBeGreaterThanOrEqual(0);
    const first = openai.requests[before]!.json as Json;
    expect((first.tools as Json[]).map((t) => (t.function as Json).name)).toEqual(['search_knowledge']);
    expect(String(messagesOf(openai.requests[before]!)[0]!.content)).toContain('search_knowledge');
  });

  it('stops the tool loop at maxSteps and makes the model answer without tools', async () => {
    script = (b) =>
      b.tool_choice === 'none'
        ? { text: 'Giving up on tools.' }
        : { toolCalls: [{ name: 'lookup_order', arguments: { orderId: String(toolResults(b).length) } }] };
    const a = await agent({
      name: 'Loop',
      tools: [{ name: 'lookup_order', description: 'Order', url: `${tools.url}/order` }],
    });
    let before = openai.requests.length;
    const two = await chat(a.id, { message: 'loop', maxSteps: 2 });
    expect(two.res.status).toBe(200);
    expect((two.body.toolCalls as Json[]).length).toBe(2);
    expect(two.body.reply).toBe('Giving up on tools.');
    const reqs = openai.requests.slice(before);
    expect(reqs.map((r) => (r.json as Json).tool_choice)).toEqual(['auto', 'auto', 'none']);

    before = openai.requests.length;
    const dflt = await chat(a.id, { message: 'loop' });
    expect((dflt.body.toolCalls as Json[]).length).toBe(5);
    expect(openai.requests.length - before).toBe(6);

    const eight = await chat(a.id, { message: 'loop', maxSteps: 8 });
    expect((eight.body.toolCalls as Json[]).length).toBe(8);
    for (const bad of [0, 9, 2.5, '3']) {
      const r = await chat(a.id, { message: 'loop', maxSteps: bad });
      expect(r.res.status).toBe(400);
      expect((r.body.error as Json).param).toBe('maxSteps');
    }
  });

  it('signs custom tool calls with Standard Webhooks; a slow tool becomes a tool error, not a failed turn', async () => {
    script = (b) => {
      const results = toolResults(b);
      if (!results.length) {
        return {
          toolCalls: [
            { name: 'lookup_order', arguments: { orderId: 'A1' } },
            { name: 'slow_tool', arguments: {} },
            { name: 'broken_tool', arguments: {} },
          ],
        };
      }
      return { text: `Tools said: ${results.map((r) => String(r.content)).join(' | ')}` };
    };
    const a = await agent({
      name: 'Tools',
      tools: [
        {
          name: 'lookup_order',
          description: 'Order status',
          parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
          url: `${tools.url}/order`,
        },
        { name: 'slow_tool', description: 'Slow', url: `${tools.url}/slow`, timeoutMs: 300 },
        { name: 'broken_tool', description: 'Broken', url: `${tools.url}/broken` },
      ],
    });
    const before = tools.requests.length;
    const started = Date.now();
    const { res, body } = await chat(a.id, { message: 'Where is order A1?' });
    expect(res.status).toBe(200);
    // The turn did not wait for the slow tool's answer (30 s away).
    expect(Date.now() - started).toBeLessThan(20_000);

    const calls = body.toolCalls as Json[];
    expect(calls[0]).toMatchObject({ name: 'lookup_order', arguments: { orderId: 'A1' } });
    expect(calls[0]).not.toHaveProperty('error');
    expect(JSON.parse(String(calls[0]!.result))).toMatchObject({ status: 'shipped' });
    expect(calls[1]).toMatchObject({ name: 'slow_tool' });
    expect(calls[1]).not.toHaveProperty('result');
    expect(String(calls[1]!.error)).toMatch(/timed out after 300 ms/);
    expect(calls[2]).toMatchObject({ name: 'broken_tool', error: expect.stringContaining('503') });
    expect(calls[2]).not.toHaveProperty('result');
    expect(body.reply).toContain('shipped');
    expect(body.reply).toContain('timed out');

    const rec = tools.requests.slice(before).find((r) => r.path === '/order')!;
    const ok = verifyWebhook(
      a.toolSigningSecret as string,
      {
        id: String(rec.headers['webhook-id']),
        timestamp: String(rec.headers['webhook-timestamp']),
        signature: String(rec.headers['webhook-signature']),
      },
      rec.body,
    );
    expect(ok).toBe(true);
    expect(
      verifyWebhook(
        'whsec_' + Buffer.from('wrong-secret-wrong-secret').toString('base64'),
        {
          id: String(rec.headers['webhook-id']),
          timestamp: String(rec.headers['webhook-timestamp']),
          signature: String(rec.headers['webhook-signature']),
        },
        rec.body,
      ),
    ).toBe(false);
    expect(rec.json).toMatchObject({
      type: 'agent.tool_call',
      data: { agentId: a.id, conversationId: body.conversationId, name: 'lookup_order', arguments: { orderId: 'A1' } },
    });
  });

  it('arguments that break the tool’s parameters are not sent; the model sees why and the turn goes on', async () => {
    const bad = { orderId: 7, rush: 'yes' };
    script = (b) => {
      const results = toolResults(b);
      if (results.length === 0) return { toolCalls: [{ name: 'lookup_order', arguments: bad }] };
      if (results.length === 1) return { toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'A7' } }] };
      return { text: `Tools said: ${results.map((r) => String(r.content)).join(' | ')}` };
    };
    const a = await agent({
      name: 'Strict',
      tools: [
        {
          name: 'lookup_order',
          description: 'Order status',
          parameters: {
            type: 'object',
            properties: { orderId: { type: 'string' } },
            required: ['orderId'],
            additionalProperties: false,
          },
          url: `${tools.url}/validated`,
        },
      ],
    });
    const before = openai.requests.length;
    const { res, body } = await chat(a.id, { message: 'Where is order 7?' });
    expect(res.status).toBe(200);

    const [rejected, accepted] = body.toolCalls as Json[];
    expect(rejected).toMatchObject({ name: 'lookup_order', arguments: bad });
    expect(rejected).not.toHaveProperty('result');
    const error = String(rejected!.error);
    expect(error).toMatch(/^arguments do not match the tool's parameters: /);
    expect(error).toContain('orderId must be string');
    expect(error).toContain('"rush"');
    // The model got exactly that error as the tool result, like invalid JSON arguments.
    const seen = toolResults(openai.requests[before + 1]!.json as Json)[0]!;
    expect(JSON.parse(String(seen.content))).toEqual({ error });

    // Only the corrected call reached the tool endpoint.
    expect(accepted).toMatchObject({ arguments: { orderId: 'A7' } });
    expect(accepted).not.toHaveProperty('error');
    const received = tools.requests.filter((r) => r.path === '/validated');
    expect(received.map((r) => (r.json as { data: Json }).data.arguments)).toEqual([{ orderId: 'A7' }]);
    expect(body.reply).toContain('arguments do not match');
    expect(body.reply).toContain('shipped');
  });

  it('an instance’s context reaches the prompt, selected by instanceId or caller phone', async () => {
    script = () => ({ text: 'hello' });
    const a = await agent({ name: 'Personal', systemPrompt: 'Greet {{firstName}} warmly.' });
    const inst = (await (
      await p.request(`/v1/agents/${a.id}/instances`, {
        method: 'POST',
        key: dev.apiKey,
        json: { name: 'Ada', phoneNumber: '+14155550199', context: { firstName: 'Ada', plan: 'gold' } },
      })
    ).json()) as Json;

    const systemOf = async (json: Json) => {
      const before = openai.requests.length;
      const { res } = await chat(a.id, json);
      expect(res.status).toBe(200);
      return String(messagesOf(openai.requests[before]!)[0]!.content);
    };
    const byPhone = await systemOf({ message: 'hi', callerPhone: '+1 (415) 555-0199' });
    expect(byPhone).toContain('Greet Ada warmly.');
    expect(byPhone).toContain('plan: gold');
    const byId = await systemOf({ message: 'hi', instanceId: inst.id });
    expect(byId).toContain('plan: gold');
    const none = await systemOf({ message: 'hi', callerPhone: '+19999999999' });
    expect(none).not.toContain('plan: gold');
    expect((await chat(a.id, { message: 'hi', instanceId: 'ins_missing' })).res.status).toBe(404);
  });

  it('meters llm credits by reported tokens; a caller key or a failed turn charges nothing', async () => {
    const d = await p.developer('pro');
    const a = await agent({ name: 'Metered' }, d.apiKey);
    const llmCredits = async () =>
      ((await (await p.request('/v1/usage', { key: d.apiKey })).json()) as { breakdown: { llm: number } }).breakdown
        .llm;
    const say = (headers: Record<string, string> = {}) =>
      p.request(`/v1/agents/${a.id}/chat`, { method: 'POST', key: d.apiKey, json: { message: 'hi' }, headers });
    const start = await llmCredits();
    script = () => ({ text: 'ok', usage: { input: 1000, output: 500 } });
    expect((await say()).status).toBe(200);
    const afterOne = await llmCredits();
    expect(afterOne - start).toBeCloseTo(150, 5); // 1500 tokens × 0.1 credit
    expect((await say({ 'X-Provider-Key-OpenAI': 'sk-caller' })).status).toBe(200);
    expect(await llmCredits()).toBeCloseTo(afterOne, 5);
    script = () => ({ status: 500 });
    expect((await say()).status).toBe(502);
    expect(await llmCredits()).toBeCloseTo(afterOne, 5);
  });

  it('stream: true answers as Server-Sent Events and stores the same turn', async () => {
    script = (b) =>
      toolResults(b).length
        ? { text: 'Your order has shipped and arrives tomorrow.' }
        : { toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'S1' } }] };
    const a = await agent({
      name: 'Streamer',
      tools: [{ name: 'lookup_order', description: 'Order', url: `${tools.url}/order` }],
    });
    const res = await p.request(`/v1/agents/${a.id}/chat`, {
      method: 'POST',
      key: dev.apiKey,
      json: { message: 'Where is S1?', stream: true },
      headers: { 'Idempotency-Key': 'stream-1' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-provider-used')).toBe('openai');
    const events = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((block) => {
        const event = /^event: (.+)$/m.exec(block)![1]!;
        const data = JSON.parse(/^data: (.+)$/m.exec(block)![1]!) as Json;
        return { event, data };
      });
    const kinds = events.map((e) => e.event);
    expect(kinds[0]).toBe('tool_call');
    expect(kinds).toContain('tool_result');
    expect(kinds.filter((k) => k === 'delta').length).toBeGreaterThan(1);
    expect(kinds.at(-1)).toBe('done');
    const text = events
      .filter((e) => e.event === 'delta')
      .map((e) => e.data.text)
      .join('');
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ reply: text, turnIndex: 0, toolCalls: [{ name: 'lookup_order' }] });
    expect((done.toolCalls as Json[])[0]).not.toHaveProperty('error');
    const next = await chat(a.id, { message: 'thanks', conversationId: done.conversationId });
    expect(next.body.turnIndex).toBe(1);

    script = () => ({ status: 500 });
    const failed = await p.request(`/v1/agents/${a.id}/chat`, {
      method: 'POST',
      key: dev.apiKey,
      json: { message: 'x', stream: true },
    });
    const body = await failed.text();
    expect(body).toContain('event: error');
    expect(body).toContain('upstream_error');
    const bad = await p.request(`/v1/agents/${a.id}/chat`, {
      method: 'POST',
      key: dev.apiKey,
      json: { message: '', stream: true },
    });
    expect(bad.status).toBe(400);
  });

  it('upstream failures are clean errors and store nothing', async () => {
    const a = await agent({ name: 'Fails' });
    script = () => ({ status: 401 });
    const r401 = await chat(a.id, { message: 'hi' });
    expect(r401.res.status).toBe(400);
    expect((r401.body.error as Json).code).toBe('provider_unavailable');
    script = () => ({ status: 500 });
    const r500 = await chat(a.id, { message: 'hi' });
    expect(r500.res.status).toBe(502);
    expect((r500.body.error as Json).code).toBe('upstream_error');
    const { rows } = await p.infra.db.query('select count(*)::int as n from agent_conversations where agent_id = $1', [
      a.id,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it.each([
    [{}, 'message'],
    [{ message: '' }, 'message'],
    [{ message: 'x'.repeat(10_001) }, 'message'],
    [{ message: 'hi', extra: true }, null],
  ])('400 for a bad chat body #%#', async (json, param) => {
    const a = await agent({ name: 'Bad' });
    const r = await chat(a.id, json as Json);
    expect(r.res.status).toBe(400);
    if (param) expect((r.body.error as Json).param).toBe(param);
  });
});

export type { ScriptedReply };
