import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

type Json = Record<string, unknown>;
let p: TestPlatform;
let mine: { apiKey: string };
let theirs: { apiKey: string };
let myAgent: string;
let theirAgent: string;
let theirInstance: string;
let theirCollection: string;

async function post(path: string, key: string, json: unknown): Promise<{ status: number; body: Json }> {
  const res = await p.request(path, { method: 'POST', key, json });
  return { status: res.status, body: (await res.json()) as Json };
}

function expectNotFound(r: { status: number; body: Json }, param: string): void {
  expect(r.status).toBe(404);
  expect(r.body.error).toMatchObject({ code: 'not_found', param });
}

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  mine = await p.developer();
  theirs = await p.developer();
  myAgent = (await post('/v1/agents', mine.apiKey, { name: 'mine' })).body.id as string;
  theirAgent = (await post('/v1/agents', theirs.apiKey, { name: 'theirs' })).body.id as string;
  theirInstance = (await post(`/v1/agents/${theirAgent}/instances`, theirs.apiKey, {})).body.id as string;
  theirCollection = (await post('/v1/collections', theirs.apiKey, { name: 'c' })).body.id as string;
});
afterAll(() => p?.close());

describe('ids named in bodies and queries are checked against the caller at submission', () => {
  // Regression: analyze accepted another developer's collectionId and the job failed later.
  it("POST /v1/video/analyze with another developer's collectionId is 404", async () => {
    const r = await post('/v1/video/analyze', mine.apiKey, {
      video_url: 'https://example.com/v.mp4',
      tasks: ['transcribe', 'embed'],
      collectionId: theirCollection,
    });
    expectNotFound(r, 'collectionId');
  });

  // Regression: a direct session signed a token for another developer's instance.
  it("a session for another developer's instance is 404, for one's own it is granted", async () => {
    const mineInstance = (await post(`/v1/agents/${myAgent}/instances`, mine.apiKey, {})).body.id as string;
    const ok = await post('/v1/sessions/direct', mine.apiKey, { agentId: myAgent, instanceId: mineInstance });
    expect(ok.status).toBe(200);
    const direct = await post('/v1/sessions/direct', mine.apiKey, { agentId: myAgent, instanceId: theirInstance });
    expectNotFound(direct, 'instanceId');
    const twilio = await post('/v1/sessions/twilio', mine.apiKey, {
      agentId: myAgent,
      instanceId: theirInstance,
      from: '+15550001111',
      to: '+15550002222',
    });
    expectNotFound(twilio, 'instanceId');
  });

  // Regression: the filters answered an empty 200 for another developer's agent.
  it("observability filters on another developer's agent are 404, on one's own an empty 200", async () => {
    for (const path of ['/v1/observability/sessions', '/v1/observability/sessions/interruption-quality']) {
      const foreign = await p.request(`${path}?agentId=${theirAgent}`, { key: mine.apiKey });
      expectNotFound({ status: foreign.status, body: (await foreign.json()) as Json }, 'agentId');
      const own = await p.request(`${path}?agentId=${myAgent}`, { key: mine.apiKey });
      expect(own.status).toBe(200);
    }
  });
});
