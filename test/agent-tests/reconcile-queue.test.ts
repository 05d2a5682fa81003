import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileOnce } from '../../shared/composition/reconciler.ts';
import { CallTimeBudget } from '../../shared/domains/agent-tests/call-time-budget.ts';
import { executeTestRun } from '../../shared/domains/agent-tests/execute.ts';
import type { ScenarioResult } from '../../shared/domains/agent-tests/results.ts';
import { getTestRunById, insertTestRun, recordScenarioResult } from '../../shared/domains/agent-tests/store.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { catalog } from '../../shared/kernel/queue/catalog.ts';
import { enqueueUnlessQueued } from '../../shared/kernel/queue/enqueue-unless-queued.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue #35 item 4: the reconciler must not flood the queue. While the workers are busy (here: there are none), its
 * passes put each open item on the queue once — a test run whose job was lost, a campaign with recipients due —
 * however many passes run, one after the other or at once.
 */
let p: TestPlatform;
let key: string;
let developerId: string;
let agentId: string;

beforeAll(async () => {
  // No worker role: nothing takes the jobs, and no reconciler runs but the test's own passes.
  p = await startTestPlatform({
    roles: ['api'],
    env: {
      PUBLIC_BASE_URL: 'https://voice.example.com',
      REALTIME_SESSION_SECRET: 'test-secret-test-secret-test-secret-42',
      TWILIO_ACCOUNT_SID: 'AC00000000000000000000000000000000',
      TWILIO_AUTH_TOKEN: 'twilio-auth-token-reconcile',
      RECONCILE_AFTER_MS: '0',
      // Each pass falls in a new pass window: a job id per window would add one more every pass.
      RECONCILE_INTERVAL_MS: '100',
    },
  });
  ({ apiKey: key, developerId } = await p.developer('scale'));
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: { name: 'Desk', firstMessage: 'Hello.', llmModel: 'gpt-4o-mini' },
  });
  expect(a.status).toBe(201);
  agentId = ((await a.json()) as { id: string }).id;
}, 60_000);

afterAll(async () => {
  await p?.close();
});

/** Waits until the reconciler's pass window (RECONCILE_INTERVAL_MS) has moved on. */
async function nextWindow(): Promise<void> {
  const w = Math.floor(Date.now() / 100);
  await waitUntil(() => Math.floor(Date.now() / 100) > w, 5000, 10);
}

describe('the reconciler', () => {
  it('puts each test run whose job was lost on the queue once, over passes one after the other and at once', async () => {
    // Three open runs with no queue entry (as after a Redis loss).
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const row = await insertTestRun(p.infra.db, {
        id: newId('testRun'),
        developerId,
        agentId,
        version: null,
        scenarios: [{ name: `s${n}`, transport: 'twilio', callerVoice: 'kal', turns: [{ say: 'Hi.' }] }],
        webhookUrl: null,
      });
      ids.push(row.id);
    }
    await Promise.all([reconcileOnce(p.infra), reconcileOnce(p.infra)]);
    await nextWindow();
    await reconcileOnce(p.infra);
    const q = p.infra.queues.get(catalog['agent-tests.run'].queue);
    const waiting = await q.getJobs(['waiting', 'prioritized', 'delayed']);
    expect(waiting.map((j) => j.id).sort()).toEqual([...ids].sort());
  });

  it('adds a campaign dispatch only while none is queued for that campaign', async () => {
    const r = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550009999', recipients: [{ phone: '+15550100001' }, { phone: '+15550100002' }] },
    });
    expect(r.status).toBe(201);
    const campaignId = ((await r.json()) as { id: string }).id;
    const dispatches = async () =>
      (await p.infra.queues.get('cpu').getJobs(['waiting', 'prioritized', 'delayed'])).filter(
        (j) => j.name === 'campaign.dispatch' && (j.data as { campaignId: string }).campaignId === campaignId,
      ).length;
    const atCreation = await dispatches();
    for (let pass = 0; pass < 4; pass++) {
      await nextWindow();
      await reconcileOnce(p.infra);
    }
    // Its creation's dispatch and at most one of the reconciler's, not one per pass.
    expect(await dispatches()).toBeLessThanOrEqual(atCreation + 1);
  });

  it('enqueueUnlessQueued adds under a fixed id once, and again once the entry is gone', async () => {
    const add = () => enqueueUnlessQueued(p.infra.queues, 'campaign.dispatch', { campaignId: 'cmp_x' }, 'fixed-x');
    expect(await add()).toBe(true);
    expect(await add()).toBe(false);
    expect(await add()).toBe(false);
    await p.infra.queues.get('cpu').remove('fixed-x');
    expect(await add()).toBe(true);
  });
});

describe("a run's call-time budget", () => {
  it('fires at once when the stored results are past the cap', () => {
    const b = new CallTimeBudget(60_000, 61_000);
    expect(b.exceeded).toBe(true);
    b.close();
  });

  it('ends a run whose calls so far passed the cap as error, without placing another call', async () => {
    const scenario = { name: 's', transport: 'twilio' as const, callerVoice: 'kal' as const, turns: [{ say: 'Hi.' }] };
    const row = await insertTestRun(p.infra.db, {
      id: newId('testRun'),
      developerId,
      agentId,
      version: null,
      scenarios: [scenario, scenario],
      webhookUrl: null,
    });
    // An earlier attempt's first call took longer than the whole run may (AGENT_TESTS_MAX_CALL_MINUTES, 120).
    const long = { name: 's', passed: true, durationMs: 121 * 60_000 } as ScenarioResult;
    await recordScenarioResult(p.infra.db, row.id, 0, long);
    let platforms = 0;
    await executeTestRun(p.infra, row.id, {
      startPlatform: () => {
        platforms++;
        throw new Error('no call may be placed');
      },
      signal: new AbortController().signal,
      log: p.infra.log,
    });
    const after = (await getTestRunById(p.infra.db, row.id))!;
    expect(after.status).toBe('error');
    expect(after.error).toMatch(/passed its cap of 120 minutes of call time/);
    expect(after.results[1]).toBeNull();
    expect(platforms).toBe(0);
  });

  it('counts the calls in progress, and fires while one goes on past the cap', async () => {
    const b = new CallTimeBudget(1000, 900);
    expect(b.exceeded).toBe(false);
    const end = b.start();
    await new Promise<void>((r) => b.signal.addEventListener('abort', () => r(), { once: true }));
    expect(b.exceeded).toBe(true);
    expect(end()).toBeGreaterThan(100);
    b.close();
  });
});
