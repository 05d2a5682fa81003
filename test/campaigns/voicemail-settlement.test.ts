import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silence, tone } from '../../support/doubles/audio.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { startCampaignHarness, type CampaignHarness } from './harness.ts';

/**
 * Settlement judges a campaign call by what happened on it (the session's typed end reason), never by the agent's
 * voicemail setting read again at settlement: an agent edited after its call started keeps that call's outcome.
 */
let h: CampaignHarness;
let p: TestPlatform;
let key: string;
let agentId: string;
const PHONE = '+15550400001';

beforeAll(async () => {
  h = await startCampaignHarness({
    accountSid: 'ACvoicemail0000000000000000000000',
    authToken: 'twilio-auth-token-voicemail',
    // A voicemail greeting, its beep, then the machine records what the agent says until the platform hangs up.
    script: () => ({
      answer: 'machine',
      talk: async (c) => {
        // The session has loaded the agent (leave_message) once it is active; the agent changes now, before
        // the message and long before the attempt settles.
        await waitUntil(async () => {
          const { rows } = await p.infra.db.query<{ status: string }>(
            'select status from rt_sessions where call_sid = $1',
            [c.call],
          );
          return rows[0]?.status === 'active';
        }, 30_000);
        const put = await p.request(`/v1/agents/${agentId}`, {
          method: 'PUT',
          key,
          json: { voicemail: { action: 'hangup' } },
        });
        expect(put.status).toBe(200);
        await c.say(
          Buffer.concat([
            await fliteUtterance('Hi, you have reached Dana. Please leave a message after the tone.'),
            silence(8000, 0.4),
          ]),
        );
        await c.say(Buffer.concat([tone(8000, 0.5, 1000, 9000), silence(8000, 3)]));
        await c.closed;
      },
    }),
    heard: () => '',
    reply: 'unused',
  });
  p = h.p;
  ({ apiKey: key } = await p.developer('pro'));
  const a = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: {
      name: 'Recall',
      systemPrompt: 'You remind {{name}} of their appointment.',
      firstMessage: 'Hello {{name}}, this is the clinic.',
      llmModel: 'gpt-4o-mini',
      voicemail: { action: 'leave_message', message: 'Hi {{name}}, this is the clinic. Please call us back.' },
    },
  });
  expect(a.status).toBe(201);
  agentId = ((await a.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('campaign settlement after the agent changed', () => {
  it('a message left on the call stays voicemail_left though the agent now hangs up on machines', async () => {
    const res = await p.request('/v1/campaigns', {
      method: 'POST',
      key,
      json: {
        agentId,
        from: '+15550009999',
        recipients: [{ phone: PHONE, variables: { name: 'Dana' } }],
        retry: { maxAttempts: 1, backoff: 0 },
        webhookUrl: 'https://hooks.example.com/campaigns',
      },
    });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the response read field by field
    const done = await waitUntil<any>(
      async () => {
        const d = (await (await p.request(`/v1/campaigns/${id}`, { key })).json()) as {
          recipients: { state: string }[];
        };
        return d.recipients[0]!.state === 'done' ? d : null;
      },
      90_000,
      250,
    );
    const agent = (await (await p.request(`/v1/agents/${agentId}`, { key })).json()) as { voicemail: unknown };
    expect(agent.voicemail).toMatchObject({ action: 'hangup' });
    const r = done.recipients[0];
    expect(r).toMatchObject({ outcome: 'voicemail_left', answeredBy: 'machine' });
    expect(r.attempts[0]).toMatchObject({ outcome: 'voicemail_left', endReason: 'voicemail-left' });
    const s = (await (await p.request(`/v1/observability/sessions/${r.attempts[0].sessionId}`, { key })).json()) as {
      endReason: string;
      turns: { speaker: string; text: string }[];
    };
    expect(s.endReason).toBe('voicemail-left');
    expect(s.turns.filter((t) => t.speaker === 'assistant').map((t) => t.text)).toEqual([
      'Hi Dana, this is the clinic. Please call us back.',
    ]);
    // The finished-call webhook carries the outcome and the end reason it was decided from.
    const { rows } = await p.infra.db.query<{ body: string }>(
      `select body from webhook_messages where source = $1 and event_type = 'campaign.call.finished'`,
      [`campaign_call:${r.attempts[0].id}`],
    );
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.body).data).toMatchObject({ outcome: 'voicemail_left', endReason: 'voicemail-left' });
  }, 120_000);
});
