import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform } from '../../scripts/platform.ts';
import type { TestRun } from '../../shared/contracts/agent-tests.ts';
import { executeTestRun, type StartPrivatePlatform } from '../../shared/domains/agent-tests/execute.ts';
import { getTestRunById } from '../../shared/domains/agent-tests/store.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue #35, low: a metered test run whose worker died was charged twice (278 credits for a scenario whose result
 * said 26): the dead attempt's call was charged (or its holds left reserved for ever) and the next attempt played
 * the scenario again. Here the job handler runs twice for one run, the first attempt cut off mid-call as a stalled
 * job's is; once the run ends, the developer has been charged exactly what its results say.
 */
const REPLY = 'This is the vendor speaking: we open at eight on Saturdays.';
let p: TestPlatform;
let llm: OpenAiChatDouble;
let key: string;
let developerId: string;

const startPrivate: StartPrivatePlatform = (config, log) => startPlatform(config, log, ['api', 'realtime']);

const creditsUsed = async () =>
  ((await (await p.request('/v1/usage', { key })).json()) as { credits: { used: number } }).credits.used;

async function sessionsOf(dev: string) {
  const { rows } = await p.infra.db.query<{ id: string; status: string }>(
    'select id, status from rt_sessions where developer_id = $1 order by id',
    [dev],
  );
  return rows;
}

beforeAll(async () => {
  llm = await startOpenAiChatDouble(() => ({ text: REPLY, usage: { input: 400, output: 60 } }), {
    key: 'sk-deployment-openai',
    firstTokenMs: 50,
    tokensPerSecond: 200,
  });
  // No worker role: the test runs the job handler itself, twice.
  p = await startTestPlatform({
    roles: ['api'],
    env: {
      AGENT_TESTS_MAX_PARALLEL: '1',
      OPENAI_BASE_URL: llm.baseUrl,
      OPENAI_API_KEY: llm.key,
    },
  });
  ({ apiKey: key, developerId } = await p.developer('pro'));
}, 60_000);

afterAll(async () => {
  await p?.close();
  await llm?.close();
});

describe('a metered run whose first attempt died', () => {
  it('is charged what its results say, once', async () => {
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'Desk', firstMessage: 'Hello.', llmProvider: 'openai', llmModel: 'gpt-4o-mini' },
    });
    expect(a.status).toBe(201);
    const agentId = ((await a.json()) as { id: string }).id;
    const before = await creditsUsed();
    const created = await p.request(`/v1/agents/${agentId}/tests`, {
      method: 'POST',
      key,
      json: {
        scenarios: [
          {
            name: 'own LLM',
            turns: [{ say: 'Are you open on Saturday?' }, { say: 'And on Sunday?' }],
          },
        ],
      },
    });
    expect(created.status).toBe(202);
    const run = (await created.json()) as TestRun;
    expect(run.mode).toBe('metered');

    // Attempt 1: cut off once the vendor has answered the first turn (its call has cost something by then).
    const first = new AbortController();
    const attempt1 = executeTestRun(p.infra, run.id, {
      startPlatform: startPrivate,
      signal: first.signal,
      log: p.infra.log,
    });
    await waitUntil(() => llm.requests.length >= 1, 120_000);
    first.abort(new Error('the worker died'));
    await expect(attempt1).rejects.toThrow();
    const [dead] = await sessionsOf(developerId);
    expect(dead).toBeDefined();
    // The dead attempt's call was charged, and its scenario has no result: the next attempt plays it again.
    await waitUntil(async () => (await sessionsOf(developerId))[0]?.status !== 'active', 30_000);
    expect(await creditsUsed()).toBeGreaterThan(before);
    expect((await getTestRunById(p.infra.db, run.id))!.results).toEqual([null]);

    // Attempt 2 (the retry) plays it to the end.
    await executeTestRun(p.infra, run.id, {
      startPlatform: startPrivate,
      signal: new AbortController().signal,
      log: p.infra.log,
    });
    const row = (await getTestRunById(p.infra.db, run.id))!;
    expect(row.status === 'passed' || row.status === 'failed').toBe(true);
    const result = row.results[0]!;
    expect(result.sessionId).not.toBe(dead!.id);
    expect(result.costCredits).toBeGreaterThan(0);
    // Charged what the results say: the dead attempt's call was refunded.
    expect((await creditsUsed()) - before).toBe(result.costCredits);
    // The dead attempt's key was revoked with the run's end.
    const { rows: keys } = await p.infra.db.query<{ revoked_at: Date | null }>(
      'select revoked_at from api_keys where developer_id = $1 and name = $2',
      [developerId, `agent-tests ${run.id}`],
    );
    expect(keys).toHaveLength(2);
    for (const k of keys) expect(k.revoked_at).toBeInstanceOf(Date);
  });
});
