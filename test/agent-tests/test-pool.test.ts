import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRun } from '../../shared/contracts/agent-tests.ts';
import { finishTestRun } from '../../shared/domains/agent-tests/store.ts';
import { catalog } from '../../shared/kernel/queue/catalog.ts';
import { tone, wav } from '../../support/doubles/audio.ts';
import { startDeepgramDouble } from '../../support/doubles/deepgram.ts';
import type { HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue #35 item 4: one developer's test runs could hold every slot of the CPU pool. Runs and replays now have their
 * own queue (cpu-tests) and worker, a per-developer limit of runs in flight (by tier, 429) and a cap on a run's call
 * time (400). The long runs here wait on an audio URL that never answers: they hold their worker without spending
 * the machine's CPU, which is what a run of long silences does.
 */
let p: TestPlatform;
let deepgram: HttpDouble;
let stall: Server;
let stallUrl: string;
/** Requests for the stalled audio, held open: one per run that is busy in its worker. */
const held: ServerResponse[] = [];
let closing = false;

async function createAgent(key: string): Promise<string> {
  const r = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Front desk', firstMessage: 'Hello, thanks for calling.' },
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

/** A scenario whose caller audio never arrives: its run stays busy in its worker until the test ends. */
const stalledScenario = (n: number) => ({
  name: `stalled ${n}`,
  llm: { replies: ['Hello.'] },
  turns: [{ audio: { url: `${stallUrl}/leg-${n}.wav`, endMs: 2000, transcript: 'hello' } }],
});

const shortScenario = { name: 'short', llm: { replies: ['Hello.'] }, turns: [{ say: 'Hi there.' }] };

function postRun(key: string, agentId: string, scenarios: unknown[]): Promise<Response> {
  return p.request(`/v1/agents/${agentId}/tests`, { method: 'POST', key, json: { scenarios } });
}

async function runStatus(key: string, id: string): Promise<string> {
  return ((await (await p.request(`/v1/agent-tests/runs/${id}`, { key })).json()) as TestRun).status;
}

beforeAll(async () => {
  stall = createServer((req, res) => {
    req.resume();
    if (closing) res.writeHead(404).end();
    else held.push(res);
  });
  await new Promise<void>((r) => stall.listen(0, '127.0.0.1', r));
  stallUrl = `http://127.0.0.1:${(stall.address() as AddressInfo).port}`;
  deepgram = await startDeepgramDouble();
  p = await startTestPlatform({
    roles: ['api', 'cpu'],
    env: {
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      // The stalled audio is waited for far longer than the test: the runs stay busy until it ends.
      OUTBOUND_TIMEOUT_MS: '600000',
      AGENT_TESTS_MAX_PARALLEL: '1',
      WORKER_CPU_CONCURRENCY: '2',
      WORKER_TESTS_CONCURRENCY: '2',
      AGENT_TESTS_IN_FLIGHT_PER_DEVELOPER: 'starter:2,pro:3,scale:8',
      AGENT_TESTS_MAX_CALL_MINUTES: '30',
      DEEPGRAM_BASE_URL: deepgram.url,
    },
  });
}, 60_000);

afterAll(async () => {
  // The stalled runs fail on their audio and end, so the workers drain.
  closing = true;
  for (const res of held) res.destroy();
  await p?.close();
  await new Promise((r) => stall?.close(() => r(null)));
  await deepgram?.close();
});

describe('the test pool', () => {
  it('a transcription is picked up at once while long test runs fill the test queue', async () => {
    const { apiKey: key } = await p.developer('scale');
    const agentId = await createAgent(key);
    // As many long runs as the CPU queue has slots (two), and one more waiting behind them.
    const runs: TestRun[] = [];
    for (let n = 0; n < 3; n++) {
      const r = await postRun(key, agentId, [stalledScenario(n)]);
      expect(r.status).toBe(202);
      runs.push((await r.json()) as TestRun);
    }
    // Two runs are busy in their workers (each waiting for its audio).
    await waitUntil(() => held.length >= 2, 60_000);

    const fd = new FormData();
    fd.append('provider', 'deepgram');
    fd.append('language', 'en');
    fd.append('file', new Blob([wav(tone(16000, 1), 16000)]), 'a.wav');
    const res = await p.request('/v1/transcribe/async', {
      method: 'POST',
      key,
      headers: { 'X-Provider-Key-Deepgram': deepgram.key },
      body: fd,
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const done = await waitUntil(async () => {
      const r = (await (await p.request(`/v1/transcribe/${id}`, { key })).json()) as { status: string };
      return r.status !== 'processing' && r;
    }, 60_000);
    expect(done.status).toBe('completed');
    // Done while the long runs still hold the test workers (the third waits for one): it never waited behind them.
    const tests = p.infra.queues.get(catalog['agent-tests.run'].queue);
    expect(tests.name).toBe('cpu-tests');
    expect(await tests.getActiveCount()).toBe(2);
    expect(await tests.getWaitingCount()).toBe(1);
    expect(held).toHaveLength(2);
    for (const run of runs.slice(0, 2)) expect(await runStatus(key, run.id)).toBe('running');
    expect(await runStatus(key, runs[2]!.id)).toBe('queued');
  }, 180_000);

  it("a developer's runs past their tier's limit are 429, counted once under concurrent requests; others are unaffected", async () => {
    const a = await p.developer('starter');
    const b = await p.developer('starter');
    const agentA = await createAgent(a.apiKey);
    const agentB = await createAgent(b.apiKey);
    // Eight at once against a limit of two: exactly two are accepted.
    const answers = await Promise.all(Array.from({ length: 8 }, () => postRun(a.apiKey, agentA, [shortScenario])));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 202, 429, 429, 429, 429, 429, 429]);
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('test_runs_in_flight_limited');
    expect(body.error.message).toMatch(/already has 2 agent test runs and call replays queued or running/);

    // Another developer on the same tier still gets theirs.
    expect((await postRun(b.apiKey, agentB, [shortScenario])).status).toBe(202);

    // The retry a 429 asks for runs the request, Idempotency-Key and all, once a place is free.
    const idem = { 'idempotency-key': `retry-${a.developerId}` };
    const post = () =>
      p.request(`/v1/agents/${agentA}/tests`, {
        method: 'POST',
        key: a.apiKey,
        headers: idem,
        json: { scenarios: [shortScenario] },
      });
    expect((await post()).status).toBe(429);
    const accepted = await Promise.all(
      answers.filter((r) => r.status === 202).map((r) => r.json() as Promise<TestRun>),
    );
    await finishTestRun(p.infra.db, accepted[0]!.id, 'ended by the test');
    expect((await post()).status).toBe(202);
  });

  it("a run whose scenarios' call budget is above the cap is 400, without echoing the input", async () => {
    const { apiKey: key } = await p.developer('pro');
    const agentId = await createAgent(key);
    const silentTurn = { say: 'Hello?', silenceBeforeMs: 60_000 };
    const long = Array.from({ length: 20 }, (_, n) => ({
      name: `long ${n}`,
      llm: { replies: ['Hello.'] },
      turns: Array.from({ length: 5 }, () => silentTurn),
    }));
    const r = await postRun(key, agentId, long);
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: { code: string; message: string; param: string } };
    expect(body.error).toMatchObject({ code: 'validation_failed', param: 'scenarios' });
    expect(body.error.message).toMatch(/up to \d+ minutes of calls, more than the 30 one run may take/);
    expect(body.error.message).not.toContain('long 1');
    // Nothing was stored or queued for it.
    const list = (await (await p.request(`/v1/agents/${agentId}/tests`, { key })).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(0);
  });
});
