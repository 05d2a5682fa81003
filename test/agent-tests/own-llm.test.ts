import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRun, TestRunDetail } from '../../shared/contracts/agent-tests.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { finishedRunDetail } from './fixtures.ts';

/**
 * Scenarios without `llm.replies` run on the agent's own LLM. The deployment's OpenAI is a double on port 0 (the
 * vendor boundary, speaking OpenAI's protocol, checking the deployment's key): an `openai` agent's scenario is
 * answered by it through a metered private platform, charged at real cost and marked as test traffic, while a
 * scripted scenario of the same run stays offline and free. A local-reply-engine agent's scenario without replies
 * runs offline on that engine, at no cost.
 */
const VENDOR_REPLY = 'This is the vendor speaking: we open at eight on Saturdays.';
let p: TestPlatform;
let llm: OpenAiChatDouble;
let key: string;

async function json<T>(r: Response): Promise<T> {
  return (await r.json()) as T;
}

async function createAgent(body: Record<string, unknown>): Promise<string> {
  const r = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Front desk', firstMessage: 'Hello, thanks for calling.', ...body },
  });
  expect(r.status).toBe(201);
  return (await json<{ id: string }>(r)).id;
}

async function finishedRun(agentId: string, scenarios: unknown[]): Promise<{ run: TestRun; detail: TestRunDetail }> {
  const created = await p.request(`/v1/agents/${agentId}/tests`, { method: 'POST', key, json: { scenarios } });
  expect(created.status).toBe(202);
  const run = await json<TestRun>(created);
  const detail = await finishedRunDetail(p, key, run.id, 180_000);
  return { run, detail };
}

const usage = async () =>
  json<{ credits: { used: number }; testTraffic: { sessions: number; credits: number } }>(
    await p.request('/v1/usage', { key }),
  );

beforeAll(async () => {
  llm = await startOpenAiChatDouble(() => ({ text: VENDOR_REPLY, usage: { input: 400, output: 60 } }), {
    key: 'sk-deployment-openai',
    firstTokenMs: 100,
    tokensPerSecond: 60,
  });
  p = await startTestPlatform({
    roles: ['api', 'realtime', 'cpu'],
    env: {
      PUBLIC_BASE_URL: 'https://voice.example.com',
      REALTIME_SESSION_SECRET: 'test-secret-test-secret-test-secret-42',
      AGENT_TESTS_MAX_PARALLEL: '1',
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      // The deployment's vendor LLM: a metered test platform keeps this key; an offline one never has it.
      OPENAI_BASE_URL: llm.baseUrl,
      OPENAI_API_KEY: llm.key,
    },
  });
  ({ apiKey: key } = await p.developer('pro'));
}, 60_000);

afterAll(async () => {
  await p?.close();
  await llm?.close();
});

describe("scenarios on the agent's own LLM", () => {
  it('a vendor LLM answers at real cost, marked as test traffic; a scripted scenario of the same run is free', async () => {
    const agentId = await createAgent({ llmProvider: 'openai', llmModel: 'gpt-4o-mini' });
    const before = await usage();
    const { run, detail } = await finishedRun(agentId, [
      {
        name: 'own LLM',
        turns: [{ say: 'Are you open on Saturday?', expect: { replyMatches: '(?i)vendor speaking' } }],
        expect: { maxCredits: 1000 },
      },
      { name: 'scripted', llm: { replies: ['Scripted: we open at nine.'] }, turns: [{ say: 'When do you open?' }] },
    ]);
    expect(run.mode).toBe('metered');
    expect(detail).toMatchObject({ status: 'passed', mode: 'metered', passed: 2 });
    const [own, scripted] = detail.results;

    // The reply came from the deployment's vendor (the double), with the deployment's key.
    expect(own).toMatchObject({ mode: 'metered', transport: 'twilio' });
    expect(own!.turns[0]!.reply).toMatch(/vendor speaking/);
    expect(own!.llm).toMatch(/the agent’s own LLM: .*\(openai\).*metered as test traffic/);
    expect(own!.stt).toMatch(/^simulated/);
    expect(llm.requests.some((r) => r.headers.authorization === 'Bearer sk-deployment-openai')).toBe(true);
    // Real cost: the minute and the vendor's tokens, and maxCredits checked against it.
    expect(own!.costCredits).toBeGreaterThan(0);
    expect(own!.checks.find((c) => c.expectation === 'expect.maxCredits 1000')).toMatchObject({
      passed: true,
      reason: `the call cost ${own!.costCredits} credits`,
    });

    // The scripted scenario ran on an offline platform (the slot restarted as that kind): free, never the vendor.
    expect(scripted).toMatchObject({ mode: 'offline', costCredits: 0 });
    expect(scripted!.llm).toMatch(/^scripted/);
    expect(scripted!.turns[0]!.reply).toMatch(/Scripted: we open at nine/);

    // Usage: the metered call's credits were charged, and both calls show as test traffic, the credits included.
    const after = await waitUntil(async () => {
      const u = await usage();
      return u.testTraffic.sessions - before.testTraffic.sessions === 2 ? u : null;
    });
    expect(after.credits.used - before.credits.used).toBeCloseTo(own!.costCredits!, 3);
    expect(after.testTraffic.credits - before.testTraffic.credits).toBeGreaterThan(0);
    expect(after.testTraffic.credits - before.testTraffic.credits).toBeCloseTo(own!.costCredits!, 3);
  }, 240_000);

  it('a local-reply-engine agent runs offline on that engine and costs nothing', async () => {
    const agentId = await createAgent({ llmProvider: 'local' });
    const requests = llm.requests.length;
    const before = await usage();
    const { run, detail } = await finishedRun(agentId, [
      { name: 'local engine', turns: [{ say: 'What are your opening hours?' }], expect: { maxCredits: 0 } },
    ]);
    expect(run.mode).toBe('offline');
    expect(detail).toMatchObject({ status: 'passed', mode: 'offline' });
    const [r] = detail.results;
    expect(r).toMatchObject({ mode: 'offline', costCredits: 0 });
    expect(r!.llm).toMatch(/the agent’s own: Local reply engine.*offline, free/);
    expect(r!.turns[0]!.reply.length).toBeGreaterThan(0);
    expect(llm.requests.length).toBe(requests);
    expect((await usage()).credits.used).toBe(before.credits.used);
  }, 120_000);
});
