import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/** Issue #22 item 4: POST /v1/estimate prices a planned operation for the caller's tier and keys before it runs. */
let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api'],
    // A Deepgram key: phone calls (a campaign's) need a provider STT; nothing is called, only priced.
    env: {
      OPENAI_API_KEY: 'sk-test-estimate',
      DEEPGRAM_API_KEY: 'dg-test-estimate',
      TIER_STARTER_MONTHLY_CREDITS: '1000',
    },
  });
}, 120_000);
afterAll(() => p?.close());

const post = (key: string, json: unknown, headers: Record<string, string> = {}) =>
  p.request('/v1/estimate', { method: 'POST', key, json, headers });

describe('POST /v1/estimate', () => {
  it('synthesis on the platform engine: characters at the tts weight, against the balance; nothing recorded', async () => {
    const dev = await p.developer('starter');
    const r = await post(dev.apiKey, { kind: 'synthesis', text: 'Hello there, caller.' });
    expect(r.status).toBe(200);
    const body = (await r.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      kind: 'synthesis',
      tier: 'starter',
      items: [{ category: 'tts', operation: 'synthesize', units: 20, billable: true, credits: 20 }],
      credits: 20,
      remaining: 1000,
      sufficient: true,
    });
    // Issue 34: absent when there is none, never null.
    for (const f of ['overage', 'dailyCap', 'assumptions']) expect(body).not.toHaveProperty(f);
    const big = (await (await post(dev.apiKey, { kind: 'transcription', seconds: 600 })).json()) as {
      credits: number;
      sufficient: boolean;
    };
    expect(big).toMatchObject({ credits: 3000, sufficient: false });
    const { rows } = await p.infra.db.query('select 1 from credit_ledger where developer_id = $1', [dev.developerId]);
    expect(rows).toHaveLength(0);
  });

  it('your own provider key (header) → not billed', async () => {
    const dev = await p.developer('starter');
    const r = await post(
      dev.apiKey,
      { kind: 'synthesis', characters: 500, provider: 'elevenlabs' },
      { 'x-provider-key-elevenlabs': 'el-caller-key-123456' },
    );
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({
      items: [{ provider: 'elevenlabs', billable: false, credits: 0 }],
      credits: 0,
      sufficient: true,
    });
  });

  it('video seconds at the job type weight; overage priced on a tier with an overage rate', async () => {
    const dev = await p.developer('pro');
    const gen = (await (await post(dev.apiKey, { kind: 'video', type: 'generate', seconds: 5 })).json()) as {
      credits: number;
    };
    expect(gen.credits).toBe(500);
    const huge = (await (await post(dev.apiKey, { kind: 'video', type: 'generate', seconds: 3000 })).json()) as {
      credits: number;
      sufficient: boolean;
      overage: { credits: number; usd: number };
    };
    expect(huge.credits).toBe(300_000);
    expect(huge.sufficient).toBe(true);
    expect(huge.overage.credits).toBe(100_000);
    expect(huge.overage.usd).toBeCloseTo(60, 2);
  });

  it('a call: minutes, and the engines the agent would use priced by who serves them, with the assumptions', async () => {
    const dev = await p.developer('starter');
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key: dev.apiKey,
      json: { name: 'Est', systemPrompt: 'x'.repeat(400), llmModel: 'gpt-4o-mini' },
    });
    const agentId = ((await a.json()) as { id: string }).id;
    const r = await post(dev.apiKey, { kind: 'call', agentId, minutes: 2, channel: 'direct' });
    expect(r.status).toBe(200);
    const e = (await r.json()) as {
      items: Array<{ operation: string; units: number; billable: boolean; credits: number }>;
      credits: number;
      assumptions: Record<string, number>;
    };
    const by = Object.fromEntries(e.items.map((i) => [i.operation, i]));
    expect(by['session.minutes']).toMatchObject({ units: 2, billable: true, credits: 40 });
    // The direct channel's local STT and TTS cost nothing; the LLM runs on the platform's OpenAI key.
    expect(by['session.stt']).toMatchObject({ billable: false, credits: 0 });
    expect(by['session.tts']).toMatchObject({ billable: false, credits: 0 });
    expect(by['session.llm']!.billable).toBe(true);
    expect(by['session.llm']!.units).toBe(8 * (100 + 500 + 60));
    expect(e.credits).toBe(40 + by['session.llm']!.credits);
    expect(e.assumptions.repliesPerMinute).toBe(4);
    // With the caller's own OpenAI key the LLM is not billed.
    const own = (await (
      await post(
        dev.apiKey,
        { kind: 'call', agentId, minutes: 2, channel: 'direct' },
        { 'x-provider-key-openai': 'sk-caller-own-key' },
      )
    ).json()) as { credits: number };
    expect(own.credits).toBe(40);
  });

  // Issue #33, item 3: the estimate said `sufficient: true` with `dailyCap.remaining: 0`.
  it('a daily cap with no room makes it insufficient, whatever the balance', async () => {
    const dev = await p.developer('starter');
    const cap = (n: number | null) =>
      p.request('/v1/billing/spending-caps', { method: 'PUT', key: dev.apiKey, json: { dailyCredits: n } });
    expect((await cap(0)).status).toBe(200);
    const e = (await (await post(dev.apiKey, { kind: 'synthesis', characters: 10 })).json()) as Record<string, unknown>;
    expect(e).toMatchObject({ credits: 10, remaining: 1000, sufficient: false, dailyCap: { cap: 0, remaining: 0 } });
    await cap(10);
    expect(await (await post(dev.apiKey, { kind: 'synthesis', characters: 10 })).json()).toMatchObject({
      sufficient: true,
      dailyCap: { cap: 10, remaining: 10 },
    });
  });

  it('a campaign: the total for every recipient, and how many calls the balance and today’s cap fund', async () => {
    const dev = await p.developer('starter');
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key: dev.apiKey,
      json: { name: 'Calls', systemPrompt: 'Short.', llmModel: 'gpt-4o-mini' },
    });
    const agentId = ((await a.json()) as { id: string }).id;
    const one = (await (
      await post(dev.apiKey, { kind: 'call', agentId, minutes: 0.25, channel: 'twilio' })
    ).json()) as { credits: number };
    const r = await post(dev.apiKey, { kind: 'campaign', agentId, recipients: 20, minutesPerCall: 0.25 });
    expect(r.status).toBe(200);
    const e = (await r.json()) as {
      credits: number;
      sufficient: boolean;
      campaign: { recipients: number; creditsPerCall: number; callsFundedNow: number };
      assumptions: Record<string, number>;
    };
    expect(e.campaign.recipients).toBe(20);
    expect(e.campaign.creditsPerCall).toBeGreaterThanOrEqual(one.credits - 1);
    expect(e.campaign.creditsPerCall).toBeLessThanOrEqual(one.credits);
    expect(e.credits).toBeGreaterThanOrEqual(20 * one.credits - 20);
    expect(e.assumptions).toMatchObject({ recipients: 20, minutesPerCall: 0.25 });
    // The balance (1000 credits) funds only part of it.
    expect(e.sufficient).toBe(e.credits <= 1000);
    expect(e.campaign.callsFundedNow).toBe(Math.min(20, Math.floor(1000 / e.campaign.creditsPerCall)));
    expect(e.campaign.callsFundedNow).toBeGreaterThan(2);
    // A daily cap of two calls' worth, under the balance: two calls today.
    await p.request('/v1/billing/spending-caps', {
      method: 'PUT',
      key: dev.apiKey,
      json: { dailyCredits: 2 * e.campaign.creditsPerCall + 1 },
    });
    const capped = (await (
      await post(dev.apiKey, { kind: 'campaign', agentId, recipients: 20, minutesPerCall: 0.25 })
    ).json()) as { sufficient: boolean; campaign: { callsFundedNow: number } };
    expect(capped).toMatchObject({ sufficient: false, campaign: { callsFundedNow: 2 } });
    // Other kinds carry no campaign figures.
    expect(one).not.toHaveProperty('campaign');
  });

  it('bad input is a 400 in the envelope; another developer’s agent is a 404', async () => {
    const dev = await p.developer('starter');
    const other = await p.developer('starter');
    const a = await p.request('/v1/agents', {
      method: 'POST',
      key: other.apiKey,
      json: { name: 'Theirs', llmModel: 'gpt-4o-mini' },
    });
    const theirs = ((await a.json()) as { id: string }).id;
    for (const body of [
      { kind: 'synthesis' },
      { kind: 'synthesis', text: 'a', characters: 1 },
      { kind: 'transcription', seconds: -1 },
      { kind: 'video', type: 'nope', seconds: 1 },
      { kind: 'teleport' },
      { kind: 'call', agentId: 'x', minutes: 1, extra: true },
      { kind: 'campaign', agentId: 'x', recipients: 0 },
      { kind: 'campaign', agentId: 'x', recipients: 2.5 },
    ]) {
      const r = await post(dev.apiKey, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    }
    expect((await post(dev.apiKey, { kind: 'call', agentId: theirs })).status).toBe(404);
  });
});
