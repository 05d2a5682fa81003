import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaignCallPath } from '../../shared/domains/campaigns/paths.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { peakConcurrentCalls, type CalleeScript } from '../../support/doubles/twilio-voice.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { campaignCompleted, startCampaignHarness, type CampaignHarness } from './harness.ts';

// Regression (issue #35, item 5 and a low item): a starter developer (5 sessions at once) with a campaign of
// maxConcurrency 10 had 10 people dialled; 5 answered into silence (their streams refused at the cap), were failed
// "media stream never connected" and not retried. The dispatcher now claims within the developer's free session
// slots; a call the platform refuses once answered plays the operator's message and re-queues its recipient. A
// replayed signed connect callback answers the attempt's one session instead of minting another.

const SID = 'ACsessioncap00000000000000000000';
const TOKEN = 'twilio-auth-token-session-cap';
const PUBLIC = 'https://voice.example.com';
let h: CampaignHarness;
let p: TestPlatform;
const scripts = new Map<string, (nth: number) => CalleeScript>();

beforeAll(async () => {
  h = await startCampaignHarness({
    accountSid: SID,
    authToken: TOKEN,
    script: (to, nth) => scripts.get(to)?.(nth) ?? { answer: 'human' },
    heard: () => 'Hello?',
    reply: 'Bye.',
    env: { RECONCILE_INTERVAL_MS: '500', RECONCILE_AFTER_MS: '1000', REALTIME_ADMISSION_MESSAGE: 'We are busy.' },
  });
  p = h.p;
}, 120_000);

afterAll(async () => {
  await h?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies read field by field in asserts
type Json = Record<string, any>;

async function setup(tier: 'starter' | 'pro') {
  const dev = await p.developer(tier);
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key: dev.apiKey,
    json: { name: 'Caller', firstMessage: 'Hello, this is the clinic.', llmModel: 'gpt-4o-mini' },
  });
  expect(a.status).toBe(201);
  return { ...dev, agentId: ((await a.json()) as { id: string }).id };
}

async function campaign(key: string, agentId: string, phones: string[], maxConcurrency: number) {
  const res = await p.request('/v1/campaigns', {
    method: 'POST',
    key,
    json: { agentId, from: '+15550009999', maxConcurrency, recipients: phones.map((phone) => ({ phone })) },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function finished(key: string, id: string): Promise<Json> {
  return campaignCompleted<Json>(p, key, id, 120_000);
}

/** Sessions the developer runs outside the campaign (rows as a running session has them): they fill the cap. */
async function occupy(developerId: string, agentId: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newId('session'));
  for (const id of ids)
    await p.infra.db.query(
      `insert into rt_sessions (id, developer_id, agent_id, channel, status, started_at, heartbeat_at)
       values ($1, $2, $3, 'direct', 'active', now(), now())`,
      [id, developerId, agentId],
    );
  return ids;
}
async function release(ids: string[]): Promise<void> {
  await p.infra.db.query(
    `update rt_sessions set status = 'completed', end_reason = 'caller-hangup', ended_at = now() where id = any($1)`,
    [ids],
  );
}

describe('a campaign under the developer session cap', () => {
  it('starter (cap 5), maxConcurrency 10, 10 recipients: at most 5 dialled at once, all answered, none failed', async () => {
    const { apiKey: key, agentId } = await setup('starter');
    const phones = Array.from({ length: 10 }, (_, i) => `+1555060${String(i).padStart(4, '0')}`);
    const id = await campaign(key, agentId, phones, 10);
    const done = await finished(key, id);
    await h.voice.idle();
    expect(done.recipients.map((r: Json) => r.outcome)).toEqual(phones.map(() => 'answered'));
    // Every recipient was dialled once, never more than five calls at once.
    const runs = h.voice.runs.filter((r) => phones.includes(r.to));
    expect(runs.map((r) => r.to).sort()).toEqual(phones);
    const peak = peakConcurrentCalls(runs);
    expect(peak).toBeLessThanOrEqual(5);
    expect(peak).toBeGreaterThan(1);
    // Each call reached the agent: a stream that was never refused.
    for (const r of runs) expect(r.twiml).toMatch(/<Connect><Stream/);
  }, 150_000);

  for (const when of ['connect', 'stream'] as const) {
    it(`a cap that fills before the ${when}: the callee hears the operator's message, the recipient is re-queued`, async () => {
      const { apiKey: key, agentId, developerId } = await setup('starter');
      const phone = when === 'connect' ? '+15550610001' : '+15550610002';
      let held: string[] = [];
      const fill = async () => {
        held = await occupy(developerId, agentId, 5);
      };
      scripts.set(phone, (nth) =>
        nth === 1
          ? { answer: 'human', ...(when === 'connect' ? { beforeConnect: fill } : { beforeStream: fill }) }
          : { answer: 'human' },
      );
      const id = await campaign(key, agentId, [phone], 1);
      // The refused attempt ends and is re-queued (not failed) while the cap stays full; then the cap frees.
      await waitUntil(async () => {
        const d = (await (await p.request(`/v1/campaigns/${id}`, { key })).json()) as Json;
        const first = d.recipients[0].attempts[0];
        return d.recipients[0].state === 'pending' && first?.endedAt ? d : null;
      }, 60_000);
      const refused = h.voice.runs.find((r) => r.to === phone)!;
      await release(held);
      const done = await finished(key, id);
      const r = done.recipients[0];
      expect(r.outcome).toBe('answered');
      expect(r.attempts).toHaveLength(2);
      expect(r.attempts[0].outcome).toBeUndefined();
      expect(r.attempts[0].error).toMatch(/session cap was full/);
      expect(r.attempts[1].outcome).toBe('answered');
      // Not silence: the operator's message, then the hang-up.
      const heard =
        when === 'connect' ? refused.twiml! : h.rest.updates.find((u) => u.callSid === refused.sid)!.form.get('Twiml')!;
      expect(heard).toMatch(/<Say>We are busy\.<\/Say><Hangup\/>/);
    }, 120_000);
  }

  it('a per-call maxCredits below one connected minute is refused at creation with a 400 naming the minimum', async () => {
    // Regression: a cap of 5 was accepted and the call charged its first minute, 20 credits.
    const { apiKey: key, agentId } = await setup('pro');
    const call = { agentId, from: '+15550001111', to: '+15550002222' };
    const bodies: Array<[string, Record<string, unknown>]> = [
      ['/v1/sessions/twilio', { ...call, maxCredits: 5 }],
      ['/v1/sessions/direct', { agentId, maxCredits: 19 }],
      ['/v1/campaigns', { agentId, from: '+15550009999', recipients: [{ phone: '+15550630001' }], maxCredits: 5 }],
    ];
    for (const [path, json] of bodies) {
      const r = await p.request(path, { method: 'POST', key, json });
      expect(r.status, path).toBe(400);
      const e = ((await r.json()) as Json).error;
      expect(e).toMatchObject({ code: 'validation_failed', param: 'maxCredits' });
      expect(e.message).toMatch(/at least 20/);
    }
    const ok = await p.request('/v1/sessions/twilio', { method: 'POST', key, json: { ...call, maxCredits: 20 } });
    expect(ok.status).toBe(200);
  });

  it('a replayed signed connect callback answers the same session, never a second one', async () => {
    const { apiKey: key, agentId } = await setup('pro');
    const phone = '+15550620001';
    const id = await campaign(key, agentId, [phone], 1);
    const done = await finished(key, id);
    await h.voice.idle();
    const attempt = done.recipients[0].attempts[0];
    const run = h.voice.runs.find((r) => r.to === phone)!;
    const connect = run.callbacks.find((c) => c.url.endsWith(campaignCallPath(attempt.id, 'connect')))!;
    const replay = async () => {
      const res = await fetch(p.url + campaignCallPath(attempt.id, 'connect'), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilio.getExpectedTwilioSignature(TOKEN, connect.url, connect.params),
        },
        body: new URLSearchParams(connect.params),
      });
      expect(res.status).toBe(200);
      return /name="sessionId" value="(ses_\w+)"/.exec(await res.text())?.[1];
    };
    expect(connect.url).toBe(PUBLIC + campaignCallPath(attempt.id, 'connect'));
    expect(await replay()).toBe(attempt.sessionId);
    expect(await replay()).toBe(attempt.sessionId);
    const { rows } = await p.infra.db.query('select count(*)::int as n from rt_sessions where task_id = $1', [
      attempt.id,
    ]);
    expect(rows[0].n).toBe(1);
  }, 90_000);
});
