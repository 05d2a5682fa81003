import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
});
afterAll(() => p?.close());

describe('Idempotency-Key on a streamed response', () => {
  // Regression: a replay of a streamed audio response used to answer 200 with an empty body.
  it('says the response cannot be replayed instead of sending an empty body', async () => {
    const { apiKey } = await p.developer();
    const headers = { 'idempotency-key': 'speech-1' };
    const json = { text: 'Idempotent speech.', format: 'wav' };
    const first = await p.request('/v1/synthesize', { method: 'POST', key: apiKey, json, headers });
    expect(first.status).toBe(200);
    expect((await first.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    const second = await p.request('/v1/synthesize', { method: 'POST', key: apiKey, json, headers });
    expect(second.status).toBe(409);
    const body = (await second.json()) as { error: { code: string } };
    expect(body.error.code).toBe('idempotency_response_unavailable');
  });
});

describe('Idempotency-Key never stores a secret', () => {
  async function storedBody(developerId: string, key: string): Promise<string | null> {
    const { rows } = await p.infra.db.query<{ response_body: Buffer | null }>(
      'select response_body from idempotency_keys where developer_id = $1 and key = $2',
      [developerId, key],
    );
    return rows[0]?.response_body?.toString('utf8') ?? null;
  }

  // Regression: POST /v1/keys stored its whole response, raw key included, for the 24 h replay window.
  it('a key creation is not stored; its replay is 409 naming the created key', async () => {
    const { apiKey, developerId } = await p.developer();
    const headers = { 'idempotency-key': 'mint-1' };
    const first = await p.request('/v1/keys', { method: 'POST', key: apiKey, json: { name: 'ci' }, headers });
    expect(first.status).toBe(201);
    const created = (await first.json()) as { id: string; key: string };
    expect(await storedBody(developerId, 'mint-1')).toBeNull();
    const { rows } = await p.infra.db.query('select * from idempotency_keys where developer_id = $1', [developerId]);
    expect(JSON.stringify(rows)).not.toContain(created.key);

    const replay = await p.request('/v1/keys', { method: 'POST', key: apiKey, json: { name: 'ci' }, headers });
    expect(replay.status).toBe(409);
    const body = (await replay.json()) as { error: { code: string; message: string; param: string } };
    expect(body.error.code).toBe('idempotency_secret_not_stored');
    expect(body.error.message).toContain(created.id);
    expect(body.error.message).toContain(`/v1/keys/${created.id}/rotate`);
    expect(JSON.stringify(body)).not.toContain(created.key);
  });

  it("an agent creation replays without the agent's tool-signing secret", async () => {
    const { apiKey, developerId } = await p.developer();
    const headers = { 'idempotency-key': 'agent-1' };
    const first = await p.request('/v1/agents', { method: 'POST', key: apiKey, json: { name: 'a' }, headers });
    expect(first.status).toBe(201);
    const created = (await first.json()) as { id: string; toolSigningSecret: string };
    expect(created.toolSigningSecret).toMatch(/^whsec_/);
    expect(await storedBody(developerId, 'agent-1')).not.toContain(created.toolSigningSecret);

    const replay = await p.request('/v1/agents', { method: 'POST', key: apiKey, json: { name: 'a' }, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const again = (await replay.json()) as Record<string, unknown>;
    expect(again.id).toBe(created.id);
    expect(again).not.toHaveProperty('toolSigningSecret');
  });
});
