import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalleeScript } from '../../support/doubles/twilio-voice.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { campaignCompleted, startCampaignHarness, type CampaignHarness } from './harness.ts';

// Regression (issue #35, item 6): calls in progress die with the realtime role, Twilio's final status callback
// reaches no one, and the reconciler asked Twilio only after ring + maximum duration + margin (≈ 66 min by
// default), so the campaign stalled on its slots for an hour. Attempts whose session died are now looked up at
// Twilio (the REST double: GET Calls/{Sid}.json) at once and settled. The bounds here are the defaults: the old
// overdue look-up cannot fire within the test.

let h: CampaignHarness;
let p: TestPlatform;
/** The recipients whose call "dies with the realtime role" (its final status callback is lost). */
const dying = new Set<string>();
/** Recipients whose session is marked lost while their call is still up at Twilio (the callee waits in silence). */
const stranded = new Map<string, (callSid: string) => Promise<void>>();

/**
 * Says hello, hears the greeting, hangs up; a dying call's session row is left as a crash leaves it. A stranded
 * callee stays on the line (until Twilio ends the call) once their session is marked lost.
 */
const script = (to: string): CalleeScript => ({
  answer: 'human',
  loseFinalCallback: dying.has(to),
  talk: async (c) => {
    await c.say(await fliteUtterance('Hello?'));
    await c.until(() => c.marksEchoed.length > 0 && !c.playing, 20_000);
    const strand = stranded.get(to);
    if (!strand) return;
    await strand(c.call);
    await c.closed;
  },
});

beforeAll(async () => {
  h = await startCampaignHarness({
    accountSid: 'ACdeadsession000000000000000000',
    authToken: 'twilio-auth-token-dead-session',
    script,
    heard: () => 'Hello?',
    reply: 'Bye.',
    env: { RECONCILE_INTERVAL_MS: '500', RECONCILE_AFTER_MS: '1000' },
  });
  p = h.p;
}, 120_000);

afterAll(async () => {
  await h?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies read field by field in asserts
type Json = Record<string, any>;

/** The session row as the crash left it: lost (the keeper marked it) or still `active` with a stale heartbeat. */
const crashes = {
  lost: (id: string) =>
    p.infra.db.query(
      `update rt_sessions set status = 'failed', end_reason = 'worker-lost', ended_at = now() - interval '2 minutes',
         error = 'the realtime process running this session stopped without ending it' where id = $1`,
      [id],
    ),
  stale: (id: string) =>
    p.infra.db.query(
      `update rt_sessions set status = 'active', end_reason = null, ended_at = null,
         heartbeat_at = now() - interval '2 minutes' where id = $1`,
      [id],
    ),
};

describe('a campaign call whose session died', () => {
  for (const crash of ['lost', 'stale'] as const) {
    it(`(${crash}) is looked up at Twilio at once: its slot frees within a minute, the next recipient is dialled`, async () => {
      const { apiKey: key } = await p.developer('pro');
      const a = await p.request('/v1/agents', {
        method: 'POST',
        key,
        json: { name: 'Caller', firstMessage: 'Hello, this is the clinic.', llmModel: 'gpt-4o-mini' },
      });
      const agentId = ((await a.json()) as { id: string }).id;
      const phones = crash === 'lost' ? ['+15550700001', '+15550700002'] : ['+15550700011', '+15550700012'];
      dying.add(phones[0]!);
      const res = await p.request('/v1/campaigns', {
        method: 'POST',
        key,
        json: {
          agentId,
          from: '+15550009999',
          maxConcurrency: 1,
          recipients: phones.map((phone) => ({ phone })),
          retry: { maxAttempts: 1, backoff: 0 },
        },
      });
      expect(res.status).toBe(201);
      const id = ((await res.json()) as { id: string }).id;
      // The first call ends at Twilio; its final callback is lost and its session row is what the crash left.
      const first = await waitUntil(() => {
        const r = h.voice.runs.find((x) => x.to === phones[0]);
        return r && Number.isFinite(r.endedAt) ? r : null;
      }, 60_000);
      const { rows } = await p.infra.db.query(
        `select k.session_id from campaign_calls k join campaign_recipients r on r.id = k.recipient_id
          where r.phone = $1 and k.campaign_id = $2`,
        [phones[0], id],
      );
      await waitUntil(async () => {
        const s = await p.infra.db.query('select status from rt_sessions where id = $1', [rows[0].session_id]);
        return s.rows[0]?.status !== 'active';
      });
      await crashes[crash](rows[0].session_id as string);

      const done = await campaignCompleted<Json>(p, key, id, 90_000);
      await h.voice.idle();
      expect(first.callbacks.some((c) => c.params.CallStatus === 'completed')).toBe(false);
      expect(done.recipients.map((r: Json) => r.state)).toEqual(['done', 'done']);
      expect(done.recipients[0].attempts[0].status).toBe('completed');
      expect(done.recipients[1].outcome).toBe('answered');
      // The second call was placed within a minute of the first one's end (not after ≈ 66 min).
      const second = h.voice.runs.find((x) => x.to === phones[1])!;
      expect(second.startedAt - first.endedAt).toBeLessThan(60_000);
    }, 150_000);
  }

  it('whose call is still up at Twilio is hung up (nobody is on it), then settled', async () => {
    const { apiKey: key } = await p.developer('pro');
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'Caller', firstMessage: 'Hello, this is the clinic.', llmModel: 'gpt-4o-mini' },
    });
    const agentId = ((await a.json()) as { id: string }).id;
    const phone = '+15550700021';
    // The realtime role "dies": its session is marked lost while the call stays up at Twilio.
    stranded.set(phone, async (callSid) => {
      await p.infra.db.query(
        `update rt_sessions set status = 'failed', end_reason = 'worker-lost', ended_at = now() - interval '1 minute'
          where call_sid = $1`,
        [callSid],
      );
    });
    const res = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550009999', maxConcurrency: 1, recipients: [{ phone }] },
    });
    const id = ((await res.json()) as { id: string }).id;
    const done = await campaignCompleted<Json>(p, key, id, 60_000);
    await h.voice.idle();
    const run = h.voice.runs.find((x) => x.to === phone)!;
    expect(h.rest.updates.filter((u) => u.callSid === run.sid).map((u) => u.form.get('Status'))).toEqual(['completed']);
    expect(done.recipients[0].state).toBe('done');
  }, 90_000);
});
