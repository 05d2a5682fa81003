import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRun, TestRunDetail } from '../../shared/kernel/contracts/agent-tests.ts';
import { FRONT_DESK_SUITE as SUITE } from './fixtures.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Agent test runs over REST, end to end and offline: POST /v1/agents/:id/tests stores the run and queues it, a CPU
 * worker plays each scenario as a phone call on a private api + realtime pair pointed at the simulated STT and the
 * scripted LLM (flite caller, real media-stream path), results are stored as each scenario finishes and read back
 * with GET. The run's owner sees it; another developer gets 404 everywhere.
 */
let p: TestPlatform;
let key: string;
let developerId: string;
let otherKey: string;
let agentId: string;

async function json<T>(r: Response): Promise<T> {
  return (await r.json()) as T;
}

beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api', 'realtime', 'cpu'],
    env: {
      PUBLIC_BASE_URL: 'https://voice.example.com',
      REALTIME_SESSION_SECRET: 'test-secret-test-secret-test-secret-42',
      AGENT_TESTS_MAX_PARALLEL: '1',
    },
  });
  ({ apiKey: key, developerId } = await p.developer('pro'));
  ({ apiKey: otherKey } = await p.developer('pro'));
  const r = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: {
      name: 'Front desk',
      systemPrompt: 'You answer the phone for a dental practice.',
      firstMessage: 'Hello, thanks for calling.',
      llmProvider: 'openai',
      llmModel: 'gpt-4o-mini',
    },
  });
  expect(r.status).toBe(201);
  agentId = (await json<{ id: string }>(r)).id;
}, 60_000);

afterAll(async () => {
  await p?.close();
});

describe('POST /v1/agents/:id/tests', () => {
  it('runs the scenarios offline as a durable job: progress, a pass, the broken agent failing with its reason', async () => {
    const usage = async () =>
      ((await (await p.request('/v1/usage', { key })).json()) as { credits: { used: number } }).credits.used;
    const usedBefore = await usage();
    const created = await p.request(`/v1/agents/${agentId}/tests`, { method: 'POST', key, json: { scenarios: SUITE } });
    expect(created.status).toBe(202);
    const run = await json<TestRun>(created);
    expect(run).toMatchObject({ agentId, status: 'queued', progress: { done: 0, total: 2 }, mode: 'offline' });

    const seen: number[] = [];
    const detail = await waitUntil(
      async () => {
        const r = await p.request(`/v1/agent-tests/runs/${run.id}`, { key });
        expect(r.status).toBe(200);
        const d = await json<TestRunDetail>(r);
        seen.push(d.progress.done);
        return d.status === 'passed' || d.status === 'failed' || d.status === 'error' ? d : null;
      },
      240_000,
      250,
    );
    // Progress only grows, and each stored result sits at its scenario's index.
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(detail).toMatchObject({ status: 'failed', progress: { done: 2, total: 2 }, passed: 1, failed: 1 });
    const [ok, broken] = detail.results;
    expect(ok).toMatchObject({ name: 'asks for Saturday hours', passed: true, file: 'scenarios[0]' });
    expect(ok!.stt).toMatch(/simulated/);
    expect(ok!.llm).toMatch(/scripted/);
    expect(ok!.turns[0]!.reply).toMatch(/saturday/i);
    expect(ok!.transcript.some((t) => /saturday/i.test(t.text))).toBe(true);
    expect(ok!.waterfall.some((t) => t.speaker !== 'user' && t.llmMs >= 0)).toBe(true);
    expect(ok!.recordingUrl).toMatch(/^\/v1\/recordings\//);
    // Offline runs cost nothing: the calls are recorded as test traffic and charged no credit.
    expect(ok!.costCredits).toBe(0);
    expect(await usage()).toBe(usedBefore);
    expect(broken!.passed).toBe(false);
    const failedCheck = broken!.checks.find((c) => !c.passed)!;
    expect(failedCheck.expectation).toBe('expect.replyNeverMatches (?i)price');
    expect(failedCheck.reason).toMatch(/the agent said "price" in "A cleaning is ninety dollars/);

    // The recording (both legs) is served on the platform's authorised route, to its owner only.
    const rec = await p.request(ok!.recordingUrl!, { key });
    expect(rec.status).toBe(200);
    expect((await p.request(ok!.recordingUrl!, { key: otherKey })).status).toBe(404);

    const list = await json<{ data: TestRun[] }>(await p.request(`/v1/agents/${agentId}/tests`, { key }));
    expect(list.data.map((r) => r.id)).toContain(run.id);
    expect(list.data[0]).toMatchObject({ status: 'failed', progress: { done: 2, total: 2 } });
  }, 300_000);

  it('plays a caller leg given as audio (an object in the developer storage) and refuses another tenant object', async () => {
    const { encodeWav } = await import('../../shared/kernel/audio/wav.ts');
    const { fliteUtterance } = await import('../../shared/domains/agent-tests/caller-speech.ts');
    const leg = encodeWav(await fliteUtterance('Are you open on Saturday?'), 8000);
    const mine = `${developerId}/uploads/caller-leg.wav`;
    await p.infra.storage.put(mine, leg, 'audio/wav');
    const scenario = (key: string) => ({
      name: 'replayed caller leg',
      llm: { replies: ['On Saturday we open at nine.'] },
      turns: [{ audio: { key, transcript: 'Are you open on Saturday?' }, expect: { replyMatches: '(?i)saturday' } }],
    });
    const created = await p.request(`/v1/agents/${agentId}/tests`, {
      method: 'POST',
      key,
      json: { scenarios: [scenario(mine), scenario('dev_someone_else/uploads/caller-leg.wav')] },
    });
    const run = await json<TestRun>(created);
    const done = await waitUntil(
      async () => {
        const d = await json<TestRunDetail>(await p.request(`/v1/agent-tests/runs/${run.id}`, { key }));
        return d.status !== 'queued' && d.status !== 'running' ? d : null;
      },
      180_000,
      250,
    );
    const [played, refused] = done.results;
    expect(played).toMatchObject({ passed: true, error: null });
    expect(played!.turns[0]).toMatchObject({ said: 'Are you open on Saturday?' });
    expect(played!.turns[0]!.heard).toMatch(/saturday/i);
    expect(refused!.passed).toBe(false);
    expect(refused!.error).toMatch(/not one of yours/);
  }, 240_000);

  it("keeps one developer's runs from another: 404 on the run, the list and a create", async () => {
    const created = await p.request(`/v1/agents/${agentId}/tests`, {
      method: 'POST',
      key,
      json: { scenarios: [{ name: 'no script', turns: [{ say: 'hello' }] }] },
    });
    const run = await json<TestRun>(created);
    expect((await p.request(`/v1/agent-tests/runs/${run.id}`, { key: otherKey })).status).toBe(404);
    expect((await p.request(`/v1/agents/${agentId}/tests`, { key: otherKey })).status).toBe(404);
    const r = await p.request(`/v1/agents/${agentId}/tests`, {
      method: 'POST',
      key: otherKey,
      json: { scenarios: SUITE },
    });
    expect(r.status).toBe(404);
    // A scenario without a scripted LLM fails with the reason, not silently against a vendor.
    const done = await waitUntil(
      async () => {
        const d = await json<TestRunDetail>(await p.request(`/v1/agent-tests/runs/${run.id}`, { key }));
        return d.status !== 'queued' && d.status !== 'running' ? d : null;
      },
      120_000,
      250,
    );
    expect(done.status).toBe('failed');
    expect(done.results[0]!.error).toMatch(/llm\.replies/);
  }, 180_000);

  it('refuses bad scenarios with the field, and a file path over the API', async () => {
    const bad = await p.request(`/v1/agents/${agentId}/tests`, {
      method: 'POST',
      key,
      json: { scenarios: 'name: x\nturns: [{say: hi, expect: {replyMatches: "(unclosed"}}]' },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toMatch(/turns\.0\.expect\.replyMatches/);
    const file = await p.request(`/v1/agents/${agentId}/tests`, {
      method: 'POST',
      key,
      json: { scenarios: [{ name: 'x', turns: [{ audio: { file: 'leg.wav' } }] }] },
    });
    expect(file.status).toBe(400);
    expect(JSON.stringify(await file.json())).toMatch(/audio\.url or audio\.key/);
    const missing = await p.request(`/v1/agents/agt_nope/tests`, { method: 'POST', key, json: { scenarios: SUITE } });
    expect(missing.status).toBe(404);
  });
});
