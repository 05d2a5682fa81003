import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_ANSWER, NO_KNOWLEDGE, spokenExcerpt } from '../../shared/engines/llm/local-reply.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * The local reply engine on a platform with no LLM configured: the README's front-desk agent provisioned over
 * real Postgres/pgvector with the local embedder, answered from its collection, greeted with its first message,
 * plainly out of answers when the knowledge has none, and named for what it is.
 */
type Json = Record<string, unknown>;
let p: TestPlatform;
let dev: { apiKey: string; developerId: string };
let agent: Json;

const HOURS = 'We are open 9am to 5pm, Monday to Friday.';

beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api'],
    env: { REALTIME_SESSION_SECRET: 'local-reply-secret-local-reply-secret-0123' },
  });
  dev = await p.developer();
  const res = await p.request('/v1/agents/provision', {
    method: 'POST',
    key: dev.apiKey,
    json: {
      name: 'Front desk',
      systemPrompt: 'You answer questions about our opening hours.',
      firstMessage: 'Hello, how can I help?',
      collection: { name: 'hours' },
      initialContent: [
        { content: HOURS, contentType: 'text' },
        { content: 'Parking is free in the garage behind the building for up to two hours.', contentType: 'text' },
      ],
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  agent = ((await res.json()) as { agent: Json }).agent;
}, 60_000);
afterAll(() => p?.close());

async function chat(agentId: unknown, json: Json) {
  const res = await p.request(`/v1/agents/${String(agentId)}/chat`, { method: 'POST', key: dev.apiKey, json });
  return { res, body: (await res.json()) as Json };
}

describe('local reply engine', () => {
  it('is the default LLM provider when none is configured, named as a lookup in the API', async () => {
    expect(agent).toMatchObject({ llmProvider: 'local', llmModel: 'knowledge-lookup' });
    const res = await p.request('/v1/llm-providers', { key: dev.apiKey });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: Json[] };
    expect(data.find((d) => d.id === 'local')).toMatchObject({
      label: 'Local reply engine (knowledge lookup, not a language model)',
      languageModel: false,
      usable: true,
      key: 'not-needed',
    });
    expect(data.find((d) => d.id === 'openai')).toMatchObject({ languageModel: true, usable: false, key: 'none' });
  });

  it('answers from the best-matching passage of the collection', async () => {
    const { res, body } = await chat(agent.id, { message: 'What are your opening hours?' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-provider-used')).toBe('local');
    expect(body.reply).toBe(HOURS);
    expect(body.toolCalls).toEqual([]);
    expect((body.usage as Json).outputTokens).toBe(Math.ceil(HOURS.length / 4));
    const parking = await chat(agent.id, { message: 'Where can I park my car?', conversationId: body.conversationId });
    expect(parking.body.reply).toMatch(/garage/);
    expect(parking.body.turnIndex).toBe(1);
  });

  it('greets with the first message', async () => {
    expect((await chat(agent.id, { message: 'Hello!' })).body.reply).toBe('Hello, how can I help?');
  });

  it('says plainly when the knowledge has no answer, and when the agent has no knowledge', async () => {
    expect((await chat(agent.id, { message: 'zxqv wqpl jjkr' })).body.reply).toBe(NO_ANSWER);
    const bare = await p.request('/v1/agents', { method: 'POST', key: dev.apiKey, json: { name: 'Bare' } });
    const bareAgent = (await bare.json()) as Json;
    expect(bareAgent.llmProvider).toBe('local');
    expect((await chat(bareAgent.id, { message: 'When do you open?' })).body.reply).toBe(NO_KNOWLEDGE);
  });

  it('streams word by word like the model engines', async () => {
    const res = await p.request(`/v1/agents/${String(agent.id)}/chat`, {
      method: 'POST',
      key: dev.apiKey,
      json: { message: 'When are you open?', stream: true },
    });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await res.text();
    const deltas = [...text.matchAll(/event: delta\ndata: (.*)\n/g)].map((m) => (JSON.parse(m[1]!) as Json).text);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe(HOURS);
    expect(text).toContain('event: done');
  });

  it('issues a direct-session token only when the agent can answer (the LLM key is checked first)', async () => {
    const ok = await p.request('/v1/sessions/direct', { method: 'POST', key: dev.apiKey, json: { agentId: agent.id } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Json).token).toEqual(expect.any(String));
    const keyless = await p.request('/v1/agents', {
      method: 'POST',
      key: dev.apiKey,
      json: { name: 'Keyless', llmProvider: 'groq' },
    });
    const res = await p.request('/v1/sessions/direct', {
      method: 'POST',
      key: dev.apiKey,
      json: { agentId: ((await keyless.json()) as Json).id },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: Json }).error).toMatchObject({ code: 'provider_unavailable' });
  });

  it('refuses a Vapi sync, which has no counterpart of a local lookup', async () => {
    const res = await p.request(`/v1/agents/${String(agent.id)}/sync`, { method: 'POST', key: dev.apiKey, json: {} });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: Json }).error).toMatchObject({
      code: 'validation_failed',
      param: 'llmProvider',
    });
  });

  it('defaults to a vendor once the developer stores its key', async () => {
    const stored = await p.request('/v1/provider-keys', {
      method: 'POST',
      key: dev.apiKey,
      json: { provider: 'anthropic', apiKey: 'sk-ant-stored-key-0000' },
    });
    expect(stored.status).toBeLessThan(300);
    const res = await p.request('/v1/agents', { method: 'POST', key: dev.apiKey, json: { name: 'Vendor' } });
    expect(((await res.json()) as Json).llmProvider).toBe('anthropic');
  });
});

describe('spokenExcerpt', () => {
  it('keeps the sentences that share words with the question, in order, at a spoken length', () => {
    const passage =
      'Our company was founded in 1998 by two brothers. We sell bicycles and spare parts. ' +
      'The workshop is open from 8am to 6pm on weekdays. On Saturdays the workshop opens at 10am. ' +
      'We also run cycling courses for children in the summer holidays.';
    expect(spokenExcerpt(passage, 'When does the workshop open on Saturday?')).toBe(
      'The workshop is open from 8am to 6pm on weekdays. On Saturdays the workshop opens at 10am.',
    );
    const long = `${'word '.repeat(80)}end.`;
    const cut = spokenExcerpt(long, 'word');
    expect(cut.split(' ').length).toBe(45);
    expect(cut.endsWith('…')).toBe(true);
  });
});
