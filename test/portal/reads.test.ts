import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../shared/kernel/ids.ts';
import { deliverWebhook } from '../../shared/domains/webhooks/delivery.ts';
import { insertWebhookMessage } from '../../shared/domains/webhooks/outbox.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { PortalBrowser } from '../../support/helpers/portal.ts';

let p: TestPlatform;
let b: PortalBrowser;
let developerId: string;
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  // A webhook receiver: /ok accepts, /fail answers 500.
  receiver = createServer((req, res) => {
    req.resume();
    res.writeHead(req.url === '/ok' ? 204 : 500).end();
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  p = await startTestPlatform({ roles: ['api'], env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  b = new PortalBrowser(p);
  developerId = await b.signIn('+13125550100', 'Reader');
}, 120_000);

afterAll(async () => {
  await p?.close();
  await new Promise<void>((r) => receiver?.close(() => r()));
});

async function ledger(day: string, category: string, credits: number, status = 'committed'): Promise<void> {
  await p.infra.db.query(
    `insert into credit_ledger (id, developer_id, category, operation, units, unit, credits, provider, billable,
       request_id, status, created_at)
     values ($1, $2, $3, 'op', 1, 'unit', $4, 'local', true, $5, $6, $7)`,
    [newId('ledger'), developerId, category, credits, newId('job'), status, `${day}T12:00:00Z`],
  );
}

describe('portal-only reads', () => {
  it('daily usage by category: every day and category of the range, refunds excluded', async () => {
    await ledger('2026-03-01', 'tts', 10);
    await ledger('2026-03-01', 'tts', 5);
    await ledger('2026-03-01', 'llm', 7);
    await ledger('2026-03-03', 'video', 100);
    await ledger('2026-03-03', 'video', 1000, 'refunded');
    await ledger('2026-03-04', 'stt', 9); // outside the range
    const res = await b.fetch('/portal/api/usage/daily?from=2026-03-01&to=2026-03-03');
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      period: { start: string; end: string };
      data: Array<{ date: string; category: string; credits: number }>;
    };
    expect(body.period).toEqual({ start: '2026-03-01', end: '2026-03-03' });
    expect(body.data).toHaveLength(3 * 6);
    const at = (date: string, category: string) =>
      body.data.find((d) => d.date === date && d.category === category)?.credits;
    expect(at('2026-03-01', 'tts')).toBe(15);
    expect(at('2026-03-01', 'llm')).toBe(7);
    expect(at('2026-03-02', 'tts')).toBe(0);
    expect(at('2026-03-03', 'video')).toBe(100);

    const period = (await (await b.fetch('/portal/api/usage/daily')).json()) as { period: { start: string } };
    expect(period.period.start).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const q of [
      'from=2026-02-30&to=2026-03-01',
      'from=2026-03-02&to=2026-03-01',
      'from=2020-01-01&to=2026-01-01',
    ]) {
      const bad = await b.fetch(`/portal/api/usage/daily?${q}`);
      expect(bad.status, q).toBe(400);
    }
  });

  it('lists video jobs newest first with a cursor, as GET /v1/video/:id shows them', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await b.fetch('/portal/api/v1/video/generate', {
        method: 'POST',
        json: { prompt: `title card ${i}`, duration_seconds: 1 },
      });
      expect(res.status, await res.clone().text()).toBe(202);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const first = (await (await b.fetch('/portal/api/video/jobs?limit=2')).json()) as {
      data: Array<{ id: string; status: string }>;
      nextCursor: string;
      hasMore: boolean;
    };
    expect(first.data.map((j) => j.id)).toEqual([ids[2], ids[1]]);
    expect(first.hasMore).toBe(true);
    const second = (await (await b.fetch(`/portal/api/video/jobs?limit=2&cursor=${first.nextCursor}`)).json()) as {
      data: Array<{ id: string }>;
      hasMore: boolean;
    };
    expect(second.data.map((j) => j.id)).toEqual([ids[0]]);
    expect(second.hasMore).toBe(false);
    const one = await (await b.fetch(`/portal/api/v1/video/${ids[0]}`)).json();
    expect(second.data[0]).toEqual(one);
  });

  it('webhooks: the signing secret masked unless revealed, and recent deliveries with their outcome', async () => {
    const ok = await insertWebhookMessage(p.infra.db, {
      developerId,
      url: `${receiverUrl}/ok`,
      source: `test:${newId('job')}`,
      type: 'video.completed',
      data: {},
    });
    const bad = await insertWebhookMessage(p.infra.db, {
      developerId,
      url: `${receiverUrl}/fail`,
      source: `test:${newId('job')}`,
      type: 'video.failed',
      data: {},
    });
    await deliverWebhook(p.infra, ok!, 1);
    await deliverWebhook(p.infra, bad!, 1);
    const masked = (await (await b.fetch('/portal/api/webhooks')).json()) as {
      signingSecret: string;
      endpoints: Array<{ url: string; signingSecret: string }>;
      deliveries: Array<Record<string, unknown>>;
    };
    expect(masked.signingSecret).toContain('•');
    expect(masked.endpoints).toHaveLength(2);
    const byId = new Map(masked.deliveries.map((d) => [d.id, d]));
    expect(byId.get(ok!)).toMatchObject({
      event: 'video.completed',
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 204,
      url: `${receiverUrl}/ok`,
    });
    expect(byId.get(ok!)!.deliveredAt).not.toBeNull();
    expect(byId.get(bad!)).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, deliveredAt: null });

    const revealed = (await (await b.fetch('/portal/api/webhooks?reveal=1')).json()) as {
      endpoints: Array<{ url: string; signingSecret: string }>;
    };
    const secret = await (
      await b.fetch(`/portal/api/v1/webhooks/secret?url=${encodeURIComponent(`${receiverUrl}/ok`)}`)
    ).json();
    expect(revealed.endpoints.find((e) => e.url === `${receiverUrl}/ok`)!.signingSecret).toBe(
      (secret as { secret: string }).secret,
    );
  });

  it('streams a call recording same-origin, and 404s a call without one', async () => {
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(40)]);
    const key = `recordings/${developerId}/test.wav`;
    await p.infra.storage.put(key, wav, 'audio/wav');
    const sessionId = newId('session');
    await p.infra.db.query(
      `insert into rt_sessions (id, developer_id, agent_id, channel, status, recording_key)
       values ($1, $2, 'agt_x', 'direct', 'completed', $3)`,
      [sessionId, developerId, key],
    );
    const res = await b.fetch(`/portal/api/recordings/${sessionId}/audio`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(wav);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    const part = await b.fetch(`/portal/api/recordings/${sessionId}/audio`, { headers: { range: 'bytes=4-11' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 4-11/${wav.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(wav.subarray(4, 12));
    const past = await b.fetch(`/portal/api/recordings/${sessionId}/audio`, { headers: { range: 'bytes=9999-' } });
    expect(past.status).toBe(200);
    expect(Buffer.from(await past.arrayBuffer())).toEqual(wav);
    const none = await b.fetch('/portal/api/recordings/ses_nothing/audio');
    expect(none.status).toBe(404);
    // Another developer's session cannot read it.
    const other = new PortalBrowser(p);
    await other.signIn('+13125550101');
    expect((await other.fetch(`/portal/api/recordings/${sessionId}/audio`)).status).toBe(404);
  });

  it("webhook endpoints, documents and failures are the developer's own: another developer gets 404", async () => {
    const add = await b.fetch('/portal/api/webhooks/endpoints', { method: 'POST', json: { url: `${receiverUrl}/ok` } });
    expect(add.status).toBe(201);
    const endpoint = (await add.json()) as { id: string; signingSecret: string };
    expect(endpoint.signingSecret).toContain('•');
    const col = (await (
      await b.fetch('/portal/api/v1/collections', { method: 'POST', json: { name: 'Own docs' } })
    ).json()) as { id: string };

    const other = new PortalBrowser(p);
    await other.signIn('+13125550199', 'Other');
    const paths: Array<[string, string]> = [
      ['POST', `/portal/api/webhooks/endpoints/${endpoint.id}/test`],
      ['DELETE', `/portal/api/webhooks/endpoints/${endpoint.id}`],
      ['GET', `/portal/api/collections/${col.id}/documents`],
    ];
    for (const [method, path] of paths) {
      const res = await other.fetch(path, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    // Still there for its owner, and the test event reaches it.
    const tested = await b.fetch(`/portal/api/webhooks/endpoints/${endpoint.id}/test`, { method: 'POST' });
    expect(await tested.json()).toMatchObject({ status: 'delivered', statusCode: 204 });
    const docs = await b.fetch(`/portal/api/collections/${col.id}/documents`);
    expect(await docs.json()).toMatchObject({ data: [], hasMore: false });
    // Bad input is the one envelope: a URL that is not http(s), an unknown field.
    for (const json of [{ url: 'ftp://example.com/x' }, { url: `${receiverUrl}/ok`, extra: 1 }]) {
      const res = await b.fetch('/portal/api/webhooks/endpoints', { method: 'POST', json });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    }
    expect((await b.fetch(`/portal/api/webhooks/endpoints/${endpoint.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await b.fetch(`/portal/api/webhooks/endpoints/${endpoint.id}`, { method: 'DELETE' })).status).toBe(404);
  });
});
