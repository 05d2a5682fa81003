import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDueRecipients } from '../../shared/domains/campaigns/store.ts';
import { startReconciler, type RunningReconciler } from '../../shared/composition/reconciler.ts';
import type { RunningWorker } from '../../shared/kernel/queue/worker-runner.ts';
import { startCpuWorkers } from '../../workers/cpu/role.ts';
import type { TwilioRestDouble } from '../../support/doubles/twilio-rest.ts';
import type { TwilioVoice } from '../../support/doubles/twilio-voice.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { startCampaignHarness, type CampaignHarness } from './harness.ts';

// Regression: a dispatcher that dies after claiming recipients must not lose them, and a dial whose answer was
// lost (the call exists at Twilio, we never got its sid) must not call the recipient a second time.

let h: CampaignHarness;
let p: TestPlatform;
let rest: TwilioRestDouble;
let voice: TwilioVoice;
let workers: RunningWorker[] = [];
let reconciler: RunningReconciler | null = null;

beforeAll(async () => {
  // No worker role: the test plays the dispatcher that dies after its claim, then starts the workers (the restart).
  h = await startCampaignHarness({
    accountSid: 'ACrecovery00000000000000000000000',
    authToken: 'twilio-auth-token-recovery',
    script: () => ({ answer: 'human' }),
    heard: () => 'Hello.',
    reply: 'Hi.',
    roles: ['api', 'realtime'],
    env: { RECONCILE_INTERVAL_MS: '300', RECONCILE_AFTER_MS: '200' },
  });
  ({ p, rest, voice } = h);
}, 120_000);

afterAll(async () => {
  await reconciler?.stop();
  await Promise.all(workers.map((w) => w.drain(2000)));
  await h?.close();
});

describe('campaign durability', () => {
  it('a crash between claim and dial loses no recipient and a lost dial answer dials nobody twice', async () => {
    const { apiKey: key } = await p.developer('pro');
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'Caller', firstMessage: 'Hello.', llmModel: 'gpt-4o-mini' },
    });
    const agentId = ((await a.json()) as { id: string }).id;
    const phones = ['+15550300001', '+15550300002', '+15550300003'];
    const res = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550009999', maxConcurrency: 2, recipients: phones.map((phone) => ({ phone })) },
    });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;

    // The dispatcher's claim commits, then its process dies before any dial job exists.
    const { ids: claimed } = await claimDueRecipients(p.infra.db, id);
    expect(claimed).toHaveLength(2);
    const { rows: states } = await p.infra.db.query(
      `select state, count(*)::int as n from campaign_recipients where campaign_id = $1 group by state order by state`,
      [id],
    );
    expect(states).toEqual([
      { state: 'calling', n: 2 },
      { state: 'pending', n: 1 },
    ]);
    expect(rest.calls).toHaveLength(0);

    // The first dial reaches Twilio but its answer is lost, as when the dialler dies mid-request.
    rest.dropNextCallAnswer();
    workers = startCpuWorkers(p.infra);
    reconciler = startReconciler(p.infra);

    type Detail = { status: string; recipients: Array<{ phone: string; outcome: string; attempts: unknown[] }> };
    const done = await waitUntil(
      async () => {
        const d = (await (await p.request(`/v1/campaigns/${id}`, { key })).json()) as Detail;
        return d.status === 'completed' ? d : null;
      },
      60_000,
      200,
    );
    await voice.idle();
    expect(done.recipients.map((r) => [r.phone, r.outcome, r.attempts.length])).toEqual(
      phones.map((ph) => [ph, 'answered', 1]),
    );
    // Every recipient was called exactly once.
    expect(rest.calls.map((f) => f.get('To')).sort()).toEqual(phones);
    const { rows } = await p.infra.db.query(
      `select count(*)::int as n, count(distinct call_sid)::int as sids from campaign_calls where campaign_id = $1`,
      [id],
    );
    expect(rows[0]).toEqual({ n: 3, sids: 3 });
  }, 90_000);
});
