import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import type { Double } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { startOpenAiChatDouble } from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startToolServer } from './doubles/tool-server.ts';

const PROMPT = 'PROMPT-' + randomBytes(8).toString('hex');
const MESSAGE = 'MESSAGE-' + randomBytes(8).toString('hex');
const REPLY = 'REPLY-' + randomBytes(8).toString('hex');
const TOOL_OUT = 'TOOLOUT-' + randomBytes(8).toString('hex');
const CALLER_KEY = 'sk-caller-' + randomBytes(12).toString('hex');
const PLATFORM_KEY = 'sk-platform-' + randomBytes(12).toString('hex');
const SECRETS = [PROMPT, MESSAGE, REPLY, TOOL_OUT, CALLER_KEY, PLATFORM_KEY];

const lines: string[] = [];
let platform: TestPlatform;
let llm: Double;
let tool: Double;
let fail = false;

/** The real platform logging everything at trace level into memory. */
beforeAll(async () => {
  llm = await startOpenAiChatDouble((b) => {
    if (fail) return { status: 500, errorBody: { error: { message: `echo ${JSON.stringify(b.messages)}` } } };
    const hasTool = (b.messages as { role: string }[]).some((m) => m.role === 'tool');
    return hasTool ? { text: REPLY } : { toolCalls: [{ name: 'lookup', arguments: { q: MESSAGE } }] };
  });
  tool = await startToolServer(() => ({ body: TOOL_OUT }));
  platform = await startTestPlatform({
    roles: ['api'],
    logLines: lines,
    env: {
      OPENAI_BASE_URL: `${llm.url}/v1`,
      OPENAI_API_KEY: PLATFORM_KEY,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
    },
  });
});
afterAll(async () => {
  await platform?.close();
  await llm?.close();
  await tool?.close();
});

describe('agent logs', () => {
  it('never contain prompts, messages, replies, tool output or keys — on success or failure', async () => {
    const dev = await insertDeveloper(platform.infra.db, 'logs', 'pro');
    const { key } = await mintKey(platform.infra.db, dev.id, 'Default');
    const req = (path: string, json: unknown, headers: Record<string, string> = {}) =>
      fetch(platform.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(json),
      });
    const agent = (await (
      await req('/v1/agents', {
        name: 'Logs',
        systemPrompt: PROMPT,
        tools: [{ name: 'lookup', description: 'd', url: `${tool.url}/t` }],
      })
    ).json()) as { id: string };
    const ok = await req(`/v1/agents/${agent.id}/chat`, { message: MESSAGE });
    expect(((await ok.json()) as { reply: string }).reply).toBe(REPLY);
    const byok = await req(
      `/v1/agents/${agent.id}/chat`,
      { message: MESSAGE },
      { 'X-Provider-Key-OpenAI': CALLER_KEY },
    );
    expect(byok.status).toBe(200);
    fail = true;
    const failed = await req(`/v1/agents/${agent.id}/chat`, { message: MESSAGE });
    expect(failed.status).toBe(502);
    const body = await failed.text();
    for (const s of SECRETS) expect(body).not.toContain(s);

    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) for (const s of SECRETS) expect(line).not.toContain(s);
  });
});
