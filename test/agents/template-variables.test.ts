import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillTemplate } from '../../shared/domains/agents/prompt.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { wsUrl } from '../../support/realtime/helpers.ts';
import { DirectClient } from '../realtime/direct-client.ts';

// Regression (issue #33, item 4): `{{name}}` was spoken with its braces on inbound, browser and test calls (no
// variables given: the template was returned as written). A missing variable now takes the default the agent
// declares (`variables: {name: {default: "there"}}`) or is left out with its braces.

describe('fillTemplate', () => {
  it('fills given names, then agent defaults; leaves out the rest with the space before them', () => {
    expect(fillTemplate('Hello {{name}}, this is {{ clinic }}.', { name: 'Ana', clinic: 'Smile' })).toBe(
      'Hello Ana, this is Smile.',
    );
    expect(fillTemplate('Hello {{name}}, welcome.', null)).toBe('Hello, welcome.');
    expect(fillTemplate('Hello {{name}}, welcome.', {}, { name: 'there' })).toBe('Hello there, welcome.');
    expect(fillTemplate('Hello {{name}}.', { name: 'Bo' }, { name: 'there' })).toBe('Hello Bo.');
    expect(fillTemplate('Hi {{a}}{{b}}!', undefined)).toBe('Hi!');
  });
});

let p: TestPlatform;
let llm: OpenAiChatDouble;
let key: string;

beforeAll(async () => {
  llm = await startOpenAiChatDouble(() => ({ text: 'Sure.' }), { key: 'sk-test-variables', tokensPerSecond: 1000 });
  p = await startTestPlatform({
    env: {
      REALTIME_SESSION_SECRET: 'variables-secret-variables-0123456789ab',
      OPENAI_BASE_URL: llm.baseUrl,
      OPENAI_API_KEY: llm.key,
    },
  });
  ({ apiKey: key } = await p.developer('pro'));
}, 120_000);

afterAll(async () => {
  await p?.close();
  await llm?.close();
});

async function agent(json: Record<string, unknown>): Promise<string> {
  const a = await p.request('/v1/agents', { method: 'POST', key, json: { llmModel: 'gpt-4o-mini', ...json } });
  expect(a.status).toBe(201);
  return ((await a.json()) as { id: string }).id;
}

/** The greeting a browser call hears (the session's first turn): with the API key, or a token with variables. */
async function greeting(agentId: string, variables?: Record<string, string>): Promise<string> {
  let url = wsUrl(p.url, `/v1/agents/${agentId}/session`);
  if (variables) {
    const t = await p.request('/v1/sessions/direct', { method: 'POST', key, json: { agentId, variables } });
    expect(t.status).toBe(200);
    url = wsUrl(p.url, `/v1/agents/${agentId}/session?token=${((await t.json()) as { token: string }).token}`);
  }
  const c = new DirectClient(url, variables ? {} : { authorization: `Bearer ${key}` });
  await c.opened;
  await waitUntil(() => c.events.some((e) => e.type === 'mark'), 20_000);
  const sessionId = (c.events[0] as { sessionId: string }).sessionId;
  c.ws.send(JSON.stringify({ type: 'stop' }));
  await c.closed;
  const d = await waitUntil(async () => {
    const b = (await (await p.request(`/v1/observability/sessions/${sessionId}`, { key })).json()) as {
      status: string;
      turns: Array<{ speaker: string; text: string }>;
    };
    return b.status === 'completed' ? b : null;
  });
  return d.turns[0]!.text;
}

describe('template variables on a browser call', () => {
  it('a missing variable is not spoken with its braces; the agent default applies', async () => {
    const plain = await agent({ name: 'Plain', firstMessage: 'Hello {{name}}, this is the clinic.' });
    expect(await greeting(plain)).toBe('Hello, this is the clinic.');
    const withDefault = await agent({
      name: 'Default',
      firstMessage: 'Hello {{name}}, this is the clinic.',
      variables: { name: { default: 'there' } },
    });
    expect(await greeting(withDefault)).toBe('Hello there, this is the clinic.');
    // The session-create body's variables come first.
    expect(await greeting(withDefault, { name: 'Ana' })).toBe('Hello Ana, this is the clinic.');
  }, 60_000);

  it('session variables are bounded (they travel in the token)', async () => {
    const agentId = await agent({ name: 'Bounded' });
    const big = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`v${i}`, 'x'.repeat(200)]));
    for (const [path, json] of [
      ['/v1/sessions/direct', { agentId, variables: big }],
      ['/v1/sessions/twilio', { agentId, from: '+15550001111', to: '+15550002222', variables: big }],
    ] as const) {
      const r = await p.request(path, { method: 'POST', key, json });
      expect(r.status, path).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    }
  });

  it('the agent field: shown when set, removed with null, bad names refused', async () => {
    const id = await agent({ name: 'Fields', variables: { name: { default: 'there' } } });
    const got = (await (await p.request(`/v1/agents/${id}`, { key })).json()) as Record<string, unknown>;
    expect(got.variables).toEqual({ name: { default: 'there' } });
    const put = await p.request(`/v1/agents/${id}`, { method: 'PUT', key, json: { variables: null } });
    expect(put.status).toBe(200);
    expect(await put.json()).not.toHaveProperty('variables');
    const bad = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'Bad', variables: { 'no spaces': { default: 'x' } } },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
  });
});
