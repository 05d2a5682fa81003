import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenAiChatDouble } from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import type { TwilioRestDouble } from '../../support/doubles/twilio-rest.ts';
import { peakConcurrentCalls, type CalleeScript, type TwilioVoice } from '../../support/doubles/twilio-voice.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { startCampaignHarness, type CampaignHarness } from './harness.ts';

let h: CampaignHarness;
let p: TestPlatform;
let rest: TwilioRestDouble;
let voice: TwilioVoice;
let llm: OpenAiChatDouble;
let hooks: Server;
let hooksUrl: string;
const received: Array<{ type: string; data: Record<string, unknown>; id: string }> = [];
let key: string;
let agentId: string;
const scripts = new Map<string, (nth: number) => CalleeScript>();

/**
 * The callee who answers "Hello?" (a short greeting, then a pause: answering-machine detection hears a person),
 * hears the agent's greeting, says one sentence, hears the answer and hangs up.
 */
const conversation: CalleeScript = {
  answer: 'human',
  talk: async (c) => {
    await c.say(await fliteUtterance('Hello?'));
    await c.until(() => c.marksEchoed.length > 0 && !c.playing, 20_000);
    const marks = c.marksEchoed.length;
    await c.say(await fliteUtterance('Yes, I can make it.'));
    await c.until(() => c.marksEchoed.length > marks && !c.playing, 20_000);
  },
};

beforeAll(async () => {
  hooks = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { type: string; data: Record<string, unknown> };
      received.push({ ...body, id: String(req.headers['webhook-id']) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
  hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
  h = await startCampaignHarness({
    accountSid: 'ACcampaign000000000000000000000000',
    authToken: 'twilio-auth-token-campaigns',
    script: (to, nth) => scripts.get(to)?.(nth) ?? conversation,
    heard: (u) => (u === 0 ? 'Hello?' : 'Yes, I can make it.'),
    reply: 'Great, see you then.',
    env: { RECONCILE_INTERVAL_MS: '500', RECONCILE_AFTER_MS: '1000' },
  });
  ({ p, rest, voice, llm } = h);
  ({ apiKey: key } = await p.developer('pro'));
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: {
      name: 'Reminder',
      systemPrompt: 'You remind {{name}} of their {{item}} appointment.',
      firstMessage: 'Hello {{name}}, this is the clinic about your {{item}}.',
      llmModel: 'gpt-4o-mini',
    },
  });
  expect(a.status).toBe(201);
  agentId = ((await a.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await h?.close();
  await new Promise((r) => hooks?.close(() => r(null)));
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies read field by field in asserts
type Json = Record<string, any>;
async function detail(id: string): Promise<Json> {
  const r = await p.request(`/v1/campaigns/${id}`, { key });
  expect(r.status).toBe(200);
  return (await r.json()) as Json;
}

describe('POST /v1/campaigns', () => {
  it('refuses bad input in the envelope', async () => {
    const bad = [
      { agentId, from: '+15550001000', recipients: [] },
      { agentId, from: 'nope', recipients: [{ phone: '+15550002000' }] },
      { agentId, from: '+15550001000', recipients: [{ phone: '+15550002000' }], timeZone: 'Mars/Olympus' },
      {
        agentId,
        from: '+15550001000',
        recipients: [{ phone: '+15550002000' }],
        callingHours: { start: '9', end: '17:00' },
      },
      { agentId, from: '+15550001000', recipients: [{ phone: '+15550002000', variables: { 'a b': 1 } }] },
    ];
    for (const json of bad) {
      const r = await p.request('/v1/campaigns', { method: 'POST', key, json });
      expect(r.status, JSON.stringify(json)).toBe(400);
      expect(((await r.json()) as Json).error.code).toBe('validation_failed');
    }
    const unknown = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: { agentId: 'agt_nope', from: '+15550001000', recipients: [{ phone: '+15550002000' }] },
    });
    expect(unknown.status).toBe(404);
    expect((await p.request('/v1/campaigns/cmp_nope', { key })).status).toBe(404);
  });

  it('calls every recipient within the concurrency limit, retries busy and no-answer, records outcomes and webhooks', async () => {
    const phones = { alice: '+15550100001', bob: '+15550100002', carol: '+15550100003', dave: '+15550100004' };
    scripts.set(phones.bob, (nth) => (nth === 1 ? { answer: 'busy' } : conversation));
    scripts.set(phones.carol, () => ({ answer: 'no-answer' }));
    scripts.set(phones.dave, () => ({ answer: 'failed', sipResponseCode: '404' }));
    const before = rest.calls.length;
    const res = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: {
        agentId,
        name: 'Reminders',
        from: '+15550009999',
        maxConcurrency: 2,
        recipients: [
          { phone: phones.alice, variables: { name: 'Alice', item: 'cleaning' } },
          { phone: phones.bob, variables: { name: 'Bob', item: 'check-up' }, timeZone: 'Europe/Paris' },
          { phone: phones.carol, variables: { name: 'Carol', item: 'x-ray' } },
          { phone: phones.dave, variables: { name: 'Dave', item: 'filling' } },
        ],
        retry: { maxAttempts: 2, backoff: 0 },
        webhookUrl: hooksUrl,
        maxDurationSeconds: 120,
      },
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Json;
    expect(created).toMatchObject({ status: 'active', maxConcurrency: 2, counts: { total: 4 } });
    const id = created.id as string;

    const done = await waitUntil(
      async () => {
        const d = await detail(id);
        return d.status === 'completed' ? d : null;
      },
      90_000,
      250,
    );
    await voice.idle();
    const by = Object.fromEntries((done.recipients as Json[]).map((r) => [r.phone, r]));
    expect(by[phones.alice]).toMatchObject({
      state: 'done',
      outcome: 'answered',
      answeredBy: 'human',
      attempts: [{ outcome: 'answered', answeredBy: 'human' }],
    });
    expect(by[phones.bob].outcome).toBe('answered');
    expect(by[phones.bob].attempts.map((a: Json) => a.outcome)).toEqual(['busy', 'answered']);
    expect(by[phones.carol].outcome).toBe('no_answer');
    expect(by[phones.carol].attempts).toHaveLength(2);
    expect(by[phones.dave]).toMatchObject({ outcome: 'failed', outcomeReason: 'SIP 404' });
    expect(by[phones.dave].attempts).toHaveLength(1); // failed is not retried
    expect(done.counts).toMatchObject({ total: 4, done: 4, outcomes: { answered: 2, no_answer: 1, failed: 1 } });

    // Each attempt was one call at Twilio, never more than two at once.
    const placed = rest.calls.slice(before);
    expect(placed).toHaveLength(6);
    const runs = voice.runs.filter((r) => Object.values(phones).includes(r.to));
    expect(runs.every((r) => r.error === null)).toBe(true);
    const peak = peakConcurrentCalls(runs);
    expect(peak).toBeLessThanOrEqual(2);

    // The media stream the TwiML named carried the agent: the greeting was filled with the recipient's variables,
    // and the prompt with them too.
    const alice = by[phones.alice].attempts[0];
    const trace = (await (await p.request(`/v1/observability/sessions/${alice.sessionId}`, { key })).json()) as Json;
    expect(trace.turns).toContainEqual(
      expect.objectContaining({ speaker: 'assistant', text: 'Hello Alice, this is the clinic about your cleaning.' }),
    );
    const prompts = llm.requests.map((r) => JSON.stringify((r.json as Json).messages[0]));
    expect(prompts.some((s) => s.includes('You remind Alice of their cleaning appointment.'))).toBe(true);
    expect(prompts.some((s) => s.includes('You remind Bob of their check-up appointment.'))).toBe(true);

    // One signed webhook per finished call.
    await waitUntil(() => received.filter((w) => w.data.campaignId === id).length === 6, 20_000);
    const events = received.filter((w) => w.data.campaignId === id);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['campaign.call.finished']));
    expect(new Set(events.map((e) => e.data.callId)).size).toBe(6);
    const bobEvents = events.filter((e) => e.data.phone === phones.bob).map((e) => [e.data.outcome, e.data.willRetry]);
    expect(events.find((e) => e.data.phone === phones.alice)?.data).toMatchObject({
      outcome: 'answered',
      answeredBy: 'human',
      beepAtMs: null,
    });
    expect(bobEvents).toEqual(
      expect.arrayContaining([
        ['busy', true],
        ['answered', false],
      ]),
    );
  }, 120_000);

  it('pauses, resumes and cancels; lists campaigns', async () => {
    const res = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: {
        agentId,
        from: '+15550009999',
        recipients: [{ phone: '+15550200001' }, { phone: '+15550200002' }],
        // Calling hours that exclude now, so nothing is dialled while the test steers the campaign.
        callingHours: closedHours(),
      },
    });
    const c = (await res.json()) as Json;
    const pause = await p.request(`/v1/campaigns/${c.id}/pause`, { method: 'POST', key });
    expect(pause.status).toBe(200);
    expect(((await pause.json()) as Json).status).toBe('paused');
    const again = await p.request(`/v1/campaigns/${c.id}/resume`, { method: 'POST', key });
    expect(((await again.json()) as Json).status).toBe('active');
    const cancel = await p.request(`/v1/campaigns/${c.id}/cancel`, { method: 'POST', key });
    expect(((await cancel.json()) as Json).status).toBe('canceled');
    const resume = await p.request(`/v1/campaigns/${c.id}/resume`, { method: 'POST', key });
    expect(resume.status).toBe(409);
    const d = await detail(c.id as string);
    expect((d.recipients as Json[]).map((r) => r.outcome)).toEqual(['canceled', 'canceled']);
    expect(rest.calls.some((f) => f.get('To') === '+15550200001')).toBe(false);
    const list = (await (await p.request('/v1/campaigns?limit=1', { key })).json()) as Json;
    expect(list).toMatchObject({ hasMore: true, data: [{ id: c.id }] });
    const other = await p.developer('pro');
    expect((await p.request(`/v1/campaigns/${c.id}`, { key: other.apiKey })).status).toBe(404);
  });
});

describe('POST /v1/campaigns/:id/cancel with calls in progress', () => {
  it('hangs them up through the REST API: sessions end campaign-canceled, recipients canceled, nobody else dialled', async () => {
    const phones = ['+15550300001', '+15550300002', '+15550300003'];
    // Both callees say hello and stay on the line until Twilio ends the stream.
    const onTheLine: CalleeScript = {
      answer: 'human',
      talk: async (c) => {
        await c.say(await fliteUtterance('Hello?'));
        await c.closed;
      },
    };
    for (const phone of phones) scripts.set(phone, () => onTheLine);
    const res = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: {
        agentId,
        from: '+15550009999',
        maxConcurrency: 2,
        recipients: phones.map((phone) => ({ phone, variables: { name: 'Eve', item: 'scan' } })),
        retry: { maxAttempts: 1, backoff: 0 },
      },
    });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as Json).id as string;
    const runsOf = () => voice.runs.filter((r) => phones.includes(r.to));
    // Both calls are in conversation: the agent's greeting has played to each callee.
    await waitUntil(() => runsOf().filter((r) => (r.caller?.marksEchoed.length ?? 0) > 0).length === 2, 60_000);
    const cancel = await p.request(`/v1/campaigns/${id}/cancel`, { method: 'POST', key });
    expect(cancel.status).toBe(200);
    expect(((await cancel.json()) as Json).status).toBe('canceled');

    const done = await waitUntil(
      async () => {
        const d = await detail(id);
        return (d.recipients as Json[]).every((r) => r.state === 'done') ? d : null;
      },
      60_000,
      250,
    );
    const [a, b, c] = done.recipients as [Json, Json, Json];
    for (const r of [a, b]) {
      expect(r).toMatchObject({ outcome: 'canceled', outcomeReason: expect.stringMatching(/hung up/) });
      expect(r.attempts).toHaveLength(1);
      const s = (await (
        await p.request(`/v1/observability/sessions/${r.attempts[0].sessionId}`, { key })
      ).json()) as Json;
      expect(s.endReason).toBe('campaign-canceled');
    }
    // The third recipient waited for a slot: never dialled.
    expect(c).toMatchObject({ outcome: 'canceled', attempts: [] });
    expect(rest.calls.filter((f) => f.get('To') === phones[2])).toHaveLength(0);
    // One hang-up per live call at Twilio, and Twilio ended each call (its media stream stopped, then completed).
    const sids = [a, b].map((r) => r.attempts[0].callSid as string);
    const hangups = rest.updates.filter((u) => sids.includes(u.callSid));
    expect(hangups.map((u) => u.form.get('Status'))).toEqual(['completed', 'completed']);
    expect(new Set(hangups.map((u) => u.callSid))).toEqual(new Set(sids));
    await voice.idle();
    expect(runsOf().map((r) => [r.finalStatus, r.error])).toEqual([
      ['completed', null],
      ['completed', null],
    ]);
  }, 120_000);

  it('pause does not hang up: the call in progress goes on and settles as usual', async () => {
    const phone = '+15550300011';
    scripts.set(phone, () => conversation);
    const res = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: { agentId, from: '+15550009999', recipients: [{ phone, variables: { name: 'Fay', item: 'scan' } }] },
    });
    const id = ((await res.json()) as Json).id as string;
    await waitUntil(() => voice.runs.some((r) => r.to === phone && r.caller), 60_000);
    const updatesBefore = rest.updates.length;
    expect((await p.request(`/v1/campaigns/${id}/pause`, { method: 'POST', key })).status).toBe(200);
    const d = await waitUntil(
      async () => {
        const x = await detail(id);
        return x.recipients[0].state === 'done' ? x : null;
      },
      60_000,
      250,
    );
    expect(d.status).toBe('paused');
    expect(d.recipients[0].outcome).toBe('answered');
    expect(rest.updates.length).toBe(updatesBefore);
  }, 120_000);
});

/** An hour-long window twelve hours away (UTC). */
function closedHours(): { start: string; end: string } {
  const h = (new Date().getUTCHours() + 12) % 24;
  const hh = (x: number) => String(x % 24).padStart(2, '0');
  return { start: `${hh(h)}:00`, end: `${hh(h + 1)}:00` };
}
