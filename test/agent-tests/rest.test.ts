import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRun, TestRunDetail } from '../../shared/contracts/agent-tests.ts';
import { finishedRunDetail, FRONT_DESK_SUITE as SUITE } from './fixtures.ts';
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
let hooks: Server;
let hooksUrl: string;
const received: { type: string; data: Record<string, unknown>; signed: boolean }[] = [];

async function json<T>(r: Response): Promise<T> {
  return (await r.json()) as T;
}

beforeAll(async () => {
  hooks = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { type: string; data: Record<string, unknown> };
      received.push({ ...body, signed: String(req.headers['webhook-signature'] ?? '').startsWith('v1,') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
  hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
  p = await startTestPlatform({
    roles: ['api', 'realtime', 'cpu'],
    env: {
      PUBLIC_BASE_URL: 'https://voice.example.com',
      REALTIME_SESSION_SECRET: 'test-secret-test-secret-test-secret-42',
      AGENT_TESTS_MAX_PARALLEL: '1',
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      // The reconciler looks at open runs at once and often, so a run whose job was lost is picked up in the test.
      RECONCILE_AFTER_MS: '0',
      RECONCILE_INTERVAL_MS: '500',
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
    },
  });
  expect(r.status).toBe(201);
  const agent = await json<{ id: string; llmProvider: string }>(r);
  // A fresh machine with no vendor key: the agent is on the local reply engine; an offline run scripts it anyway.
  expect(agent.llmProvider).toBe('local');
  agentId = agent.id;
}, 60_000);

afterAll(async () => {
  await p?.close();
  await new Promise((r) => hooks?.close(() => r(null)));
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
    // GET /v1/usage shows the two calls apart, as test traffic, at no cost.
    const traffic = async () =>
      ((await (await p.request('/v1/usage', { key })).json()) as { testTraffic: { sessions: number; credits: number } })
        .testTraffic;
    expect(await waitUntil(async () => ((await traffic()).sessions === 2 ? traffic() : null))).toEqual({
      sessions: 2,
      credits: 0,
    });
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

  it('plays a caller leg given as audio (an object in the developer storage) and refuses another tenant key', async () => {
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
    // Another tenant's key is refused before the run is stored (hostile-input.test.ts has the traversal cases).
    const refused = await p.request(`/v1/agents/${agentId}/tests`, {
      method: 'POST',
      key,
      json: { scenarios: [scenario(mine), scenario('dev_someone_else/uploads/caller-leg.wav')] },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toMatch(/no object with that key in your storage/);
    const created = await p.request(`/v1/agents/${agentId}/tests`, {
      method: 'POST',
      key,
      json: { scenarios: [scenario(mine)] },
    });
    const run = await json<TestRun>(created);
    const done = await finishedRunDetail(p, key, run.id, 180_000);
    const [played] = done.results;
    expect(played).toMatchObject({ passed: true });
    expect(played).not.toHaveProperty('error');
    expect(played!.turns[0]).toMatchObject({ said: 'Are you open on Saturday?' });
    expect(played!.turns[0]!.heard).toMatch(/saturday/i);
  }, 240_000);

  it("keeps one developer's runs from another: 404 on the run, the list and a create", async () => {
    const created = await p.request(`/v1/agents/${agentId}/tests`, {
      method: 'POST',
      key,
      json: { scenarios: [{ name: 'no script', turns: [{ say: 'hello' }] }], webhookUrl: hooksUrl },
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
    // The same account is charged by other work while the test call runs (a campaign call, say): the call's cost is
    // its own ledger rows, not the account's usage growth (issue #33).
    const charging = setInterval(() => {
      void p.infra.meter
        .reserve({
          developerId,
          category: 'llm',
          units: 1000,
          unit: 'tokens',
          provider: 'openai',
          billable: true,
          requestId: 'req_other_work',
          operation: 'chat',
        })
        .then((h) => h.commit(1000));
    }, 250);
    // Without a scripted LLM the agent's own answers: here the local reply engine, offline and free.
    const done = await finishedRunDetail(p, key, run.id, 120_000).finally(() => clearInterval(charging));
    expect(done).toMatchObject({ status: 'passed', mode: 'offline' });
    expect(done.results[0]).toMatchObject({ mode: 'offline', costCredits: 0 });
    expect(done.results[0]!.llm).toMatch(/Local reply engine/);
    // The end of the run is announced to its webhook, signed, with the run's status and progress.
    const hook = await waitUntil(() => received.find((w) => w.data.id === run.id), 30_000);
    expect(hook).toMatchObject({
      type: 'agent_test.completed',
      signed: true,
      data: { status: 'passed', mode: 'offline', progress: { done: 1, total: 1 }, agentId },
    });
  }, 180_000);

  it('puts a run whose job was lost back on the queue (Postgres is the source of truth)', async () => {
    const { insertTestRun } = await import('../../shared/domains/agent-tests/store.ts');
    const { newId } = await import('../../shared/kernel/ids.ts');
    // A run stored but never enqueued: what a Redis loss (or a crash between the insert and the enqueue) leaves.
    const row = await insertTestRun(p.infra.db, {
      id: newId('testRun'),
      developerId,
      agentId,
      version: null,
      scenarios: [{ name: 'lost', transport: 'twilio', callerVoice: 'kal', turns: [{ say: 'hello' }] }],
      webhookUrl: null,
    });
    const done = await finishedRunDetail(p, key, row.id, 60_000);
    // Its scenario ran (on the agent's local reply engine: no scripted replies).
    expect(done).toMatchObject({ status: 'passed', progress: { done: 1, total: 1 } });
    expect(done.results[0]).toMatchObject({ name: 'lost', mode: 'offline' });
  }, 90_000);

  it('documents the routes in the OpenAPI document', async () => {
    const doc = (await (await p.request('/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(doc.paths['/v1/agents/{id}/tests']?.post).toBeDefined();
    expect(doc.paths['/v1/agents/{id}/tests']?.get).toBeDefined();
    expect(doc.paths['/v1/agent-tests/runs/{runId}']?.get).toBeDefined();
    expect(JSON.stringify(doc.paths['/v1/agent-tests/runs/{runId}'])).toContain('suspectedCutIns');
  });

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
