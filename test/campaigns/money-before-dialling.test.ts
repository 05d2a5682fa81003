import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchCampaign } from '../../shared/domains/campaigns/dispatcher.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { startWebhookReceiver } from '../../support/helpers/webhook-receiver.ts';
import { clearOfUtcDayTurn } from '../../support/helpers/utc-day.ts';
import type { CalleeScript } from '../../support/doubles/twilio-voice.ts';
import { campaignCompleted, createdCampaign, startCampaignHarness, type CampaignHarness } from './harness.ts';

// Regression (issue #33, item 1): with the developer's daily spending cap used up, a campaign was accepted and
// dialled; the patient answered and the platform hung up at once. Now the dispatcher checks the money first: the
// campaign waits (`waiting: daily_cap`), one signed `campaign.paused` webhook goes out, nobody is dialled, and
// dialling resumes by itself once the cap allows it.

let h: CampaignHarness;
const scripts = new Map<string, (nth: number) => CalleeScript>();
let p: TestPlatform;
let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  h = await startCampaignHarness({
    accountSid: 'ACmoneybeforedial000000000000000',
    authToken: 'twilio-auth-token-money',
    script: (to, nth) => scripts.get(to)?.(nth) ?? { answer: 'human' },
    heard: () => 'Hello?',
    reply: 'Bye.',
    env: { RECONCILE_INTERVAL_MS: '500', RECONCILE_AFTER_MS: '1000' },
  });
  p = h.p;
}, 120_000);

afterAll(async () => {
  await h?.close();
  await hooks?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies read field by field in asserts
type Json = Record<string, any>;

async function setup() {
  const dev = await p.developer('pro');
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key: dev.apiKey,
    json: { name: 'Clinic', firstMessage: 'Hello, this is the clinic.', llmModel: 'gpt-4o-mini' },
  });
  expect(a.status).toBe(201);
  return { ...dev, agentId: ((await a.json()) as { id: string }).id };
}

/**
 * A test that spends under a daily cap and then reads what is left keeps clear of UTC midnight for its run (up to 3
 * minutes): its time limit is its own plus that wait.
 */
const DAY_TURN_SPAN_MS = 180_000;

const setCap = (key: string, dailyCredits: number | null) =>
  p.request('/v1/billing/spending-caps', { method: 'PUT', key, json: { dailyCredits } });

describe('money before dialling', () => {
  it('daily cap used up: nobody is dialled, the campaign waits (daily_cap), one webhook; a raised cap resumes it', async () => {
    const { apiKey: key, agentId } = await setup();
    expect((await setCap(key, 0)).status).toBe(200);
    const phones = ['+15550710001', '+15550710002'];
    const id = await createdCampaign(p, key, { agentId, webhookUrl: hooks.url, phones });
    const waiting = await waitUntil(async () => {
      const d = (await (await p.request(`/v1/campaigns/${id}`, { key })).json()) as Json;
      return d.waiting ? d : null;
    }, 30_000);
    expect(waiting).toMatchObject({ status: 'active', waiting: 'daily_cap' });
    expect(waiting.recipients.map((r: Json) => [r.state, r.waiting, r.attempts.length])).toEqual([
      ['pending', 'daily_cap', 0],
      ['pending', 'daily_cap', 0],
    ]);
    // The re-check runs again (the reconciler's pass and here, directly): still no dial, still one webhook.
    for (let i = 0; i < 3; i++) expect(await dispatchCampaign(p.infra, id, p.infra.log)).toBe(0);
    await waitUntil(() => hooks.received.some((w) => w.data.campaignId === id), 20_000);
    expect(h.voice.runs.filter((r) => phones.includes(r.to))).toHaveLength(0);
    const paused = hooks.received.filter((w) => w.data.campaignId === id);
    expect(paused).toHaveLength(1);
    expect(paused[0]).toMatchObject({ type: 'campaign.paused', signed: true, data: { reason: 'daily_cap' } });

    // The cap is raised: the next re-check dials everyone.
    expect((await setCap(key, null)).status).toBe(200);
    await dispatchCampaign(p.infra, id, p.infra.log);
    const done = await campaignCompleted<Json>(p, key, id, 120_000);
    expect(done.waiting).toBeUndefined();
    expect(done.recipients.map((r: Json) => r.outcome)).toEqual(['answered', 'answered']);
    expect(hooks.received.filter((w) => w.type === 'campaign.paused' && w.data.campaignId === id)).toHaveLength(1);
  }, 150_000);

  it('a cap with room for one call: one recipient dialled, then the campaign waits; the rest go when it rises', async () => {
    await clearOfUtcDayTurn(DAY_TURN_SPAN_MS);
    const { apiKey: key, agentId } = await setup();
    // One call's first minute (20 credits at the default weights), nothing more.
    expect((await setCap(key, 20)).status).toBe(200);
    const phones = ['+15550720001', '+15550720002', '+15550720003'];
    const id = await createdCampaign(p, key, { agentId, maxConcurrency: 3, phones });
    const waiting = await waitUntil(async () => {
      const d = (await (await p.request(`/v1/campaigns/${id}`, { key })).json()) as Json;
      return d.waiting && d.counts.done === 1 ? d : null;
    }, 60_000);
    expect(waiting.waiting).toBe('daily_cap');
    expect(waiting.recipients.map((r: Json) => r.attempts.length).sort()).toEqual([0, 0, 1]);
    expect(h.voice.runs.filter((r) => phones.includes(r.to))).toHaveLength(1);
    expect((await setCap(key, null)).status).toBe(200);
    await dispatchCampaign(p.infra, id, p.infra.log);
    const done = await campaignCompleted<Json>(p, key, id, 120_000);
    expect(done.recipients.map((r: Json) => r.attempts.length)).toEqual([1, 1, 1]);
    expect(h.voice.runs.filter((r) => phones.includes(r.to))).toHaveLength(3);
  }, 360_000);

  it('a cap with room for one call a day: one recipient a day, each call whole, the rest on the following days', async () => {
    await clearOfUtcDayTurn(DAY_TURN_SPAN_MS);
    const { apiKey: key, agentId, developerId } = await setup();
    expect((await setCap(key, 20)).status).toBe(200);
    const phones = ['+15550740001', '+15550740002', '+15550740003'];
    const id = await createdCampaign(p, key, { agentId, maxConcurrency: 3, phones });
    const detail = async () => (await (await p.request(`/v1/campaigns/${id}`, { key })).json()) as Json;
    for (let day = 1; day <= 2; day++) {
      const waiting = await waitUntil(async () => {
        const d = await detail();
        return d.waiting && d.counts.done === day ? d : null;
      }, 60_000);
      expect(waiting.waiting).toBe('daily_cap');
      expect(h.voice.runs.filter((r) => phones.includes(r.to))).toHaveLength(day);
      // The UTC day rolls over: what was spent is yesterday's (the ledger's clock, moved back a day), and the
      // campaign goes on by itself at its next re-check, with no cap raised.
      await p.infra.db.query(
        `update credit_ledger set created_at = created_at - interval '1 day' where developer_id = $1`,
        [developerId],
      );
      await dispatchCampaign(p.infra, id, p.infra.log);
    }
    const done = await campaignCompleted<Json>(p, key, id, 120_000);
    expect(done.recipients.map((r: Json) => [r.outcome, r.attempts.length])).toEqual([
      ['answered', 1],
      ['answered', 1],
      ['answered', 1],
    ]);
    // No call was cut by the cap: each ended as the callee ended it, never at a limit.
    const sessions = done.recipients.map((r: Json) => r.attempts[0].sessionId as string);
    const { rows } = await p.infra.db.query<{ end_reason: string }>(
      `select end_reason from rt_sessions where id = any($1)`,
      [sessions],
    );
    expect(rows).toHaveLength(3);
    for (const r of rows) expect(['daily-cap', 'max-credits', 'balance']).not.toContain(r.end_reason);
  }, 420_000);

  it('money gone between the dial and the answer: the callee hears the operator’s message, the recipient waits', async () => {
    const { apiKey: key, agentId } = await setup();
    const phone = '+15550730001';
    // The cap drops to 0 once the callee answered, before the media stream starts (another call spent it).
    scripts.set(phone, (nth) =>
      nth === 1 ? { answer: 'human', beforeStream: async () => void (await setCap(key, 0)) } : { answer: 'human' },
    );
    const res = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550009999', recipients: [{ phone }] },
    });
    const id = ((await res.json()) as { id: string }).id;
    const waiting = await waitUntil(async () => {
      const d = (await (await p.request(`/v1/campaigns/${id}`, { key })).json()) as Json;
      return d.waiting && d.recipients[0].attempts[0]?.endedAt ? d : null;
    }, 60_000);
    expect(waiting.recipients[0]).toMatchObject({ state: 'pending', waiting: 'daily_cap' });
    expect(waiting.recipients[0].attempts[0].error).toMatch(/spending_cap_reached/);
    // Not silence, not a bare hang-up: the operator's message through Twilio's REST API; no greeting was played.
    const run = h.voice.runs.find((r) => r.to === phone)!;
    const heard = h.rest.updates.find((u) => u.callSid === run.sid)!.form.get('Twiml')!;
    expect(heard).toMatch(/<Say>[^<]+<\/Say><Hangup\/>/);
    expect((await setCap(key, null)).status).toBe(200);
    await dispatchCampaign(p.infra, id, p.infra.log);
    const done = await campaignCompleted<Json>(p, key, id, 120_000);
    expect(done.recipients[0].outcome).toBe('answered');
  }, 180_000);

  it('a per-call cap below the first minute plus the voicemail message is refused at creation', async () => {
    const { apiKey: key } = await setup();
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: {
        name: 'Voicemail',
        firstMessage: 'Hello.',
        llmModel: 'gpt-4o-mini',
        voicemail: { action: 'leave_message', message: 'x'.repeat(100) },
      },
    });
    expect(a.status).toBe(201);
    const agentId = ((await a.json()) as { id: string }).id;
    const res = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550009999', maxCredits: 30, recipients: [{ phone: '+15550710003' }] },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toMatch(/at least 120/);
  });
});
