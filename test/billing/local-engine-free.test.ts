import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * The local reply engine is a knowledge lookup, not a language model, and it is free (docs/billing.md, "The local
 * reply engine is free"): its replies are recorded with 0 credits, never as LLM spend, and estimates price it at 0.
 */
let p: TestPlatform;
let dev: { apiKey: string; developerId: string };
let agentId = '';

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  dev = await p.developer();
  const res = await p.request('/v1/agents/provision', {
    method: 'POST',
    key: dev.apiKey,
    json: {
      name: 'Desk',
      firstMessage: 'Hello.',
      collection: { name: 'hours' },
      initialContent: [{ content: 'We are open 9am to 5pm, Monday to Friday.', contentType: 'text' }],
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  agentId = ((await res.json()) as { agent: { id: string; llmProvider: string } }).agent.id;
}, 60_000);
afterAll(() => p?.close());

describe('local reply engine metering', () => {
  it('records a reply with 0 credits, outside the LLM breakdown', async () => {
    const res = await p.request(`/v1/agents/${agentId}/chat`, {
      method: 'POST',
      key: dev.apiKey,
      json: { message: 'When are you open?' },
    });
    expect(res.status).toBe(200);
    const { rows } = await p.infra.db.query<{ provider: string; billable: boolean; credits: string }>(
      `select provider, billable, credits from credit_ledger where developer_id = $1 and category = 'llm'`,
      [dev.developerId],
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows)
      expect({ ...r, credits: Number(r.credits) }).toEqual({ provider: 'local', billable: false, credits: 0 });
    const usage = (await (await p.request('/v1/usage', { key: dev.apiKey })).json()) as {
      breakdown: { llm: number };
      requestCount: number;
    };
    expect(usage.breakdown.llm).toBe(0);
    expect(usage.requestCount).toBeGreaterThan(0);
  });

  it('is priced at 0 by a call estimate (the minutes still are not)', async () => {
    const res = await p.request('/v1/estimate', {
      method: 'POST',
      key: dev.apiKey,
      json: { kind: 'call', agentId, minutes: 2, channel: 'direct' },
    });
    expect(res.status).toBe(200);
    const e = (await res.json()) as { items: Array<{ operation: string; billable: boolean; credits: number }> };
    const by = Object.fromEntries(e.items.map((i) => [i.operation, i]));
    expect(by['session.llm']).toMatchObject({ provider: 'local', billable: false, credits: 0 });
    expect(by['session.minutes']!.credits).toBeGreaterThan(0);
  });
});
