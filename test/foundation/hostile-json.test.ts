import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../shared/composition/http/input-guard.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/** Issue #24 finding 6: a lone surrogate reached Postgres (500) and JSON nested 6,000 deep overflowed the stack. */
interface ErrorBody {
  error: { code: string; message: string; param: string | null; requestId: string };
}

let p: TestPlatform;
let key: string;
let agentId: string;
let collectionId: string;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  key = (await p.developer()).apiKey;
  const agent = await p.request('/v1/agents', { method: 'POST', key, json: { name: 'a', systemPrompt: 'hi' } });
  agentId = ((await agent.json()) as { id: string }).id;
  const col = await p.request('/v1/collections', { method: 'POST', key, json: { name: 'c' } });
  collectionId = ((await col.json()) as { id: string }).id;
});
afterAll(() => p?.close());

async function expect400(res: Response, param: string | null): Promise<ErrorBody> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status: 400 });
  const body = JSON.parse(text) as ErrorBody;
  expect(body.error).toMatchObject({ code: 'validation_failed', param });
  expect(body.error.requestId).toBe(res.headers.get('x-request-id'));
  return body;
}

/** `{"a":{"a":…}}` `depth` objects deep, as raw text (JSON.stringify would recurse too). */
function nested(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

const raw = (path: string, body: string, method = 'POST') =>
  p.request(path, { method, key, body, headers: { 'content-type': 'application/json' } });

describe('lone surrogates (Postgres refuses them in text: these were 500s)', () => {
  it('in a string at any depth, on every kind of stored field, is a 400 naming the field', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/v1/agents', { name: 'ok', metadata: { a: ['fine', 'x\ud800'] } }, 'metadata.a[1]'],
      ['POST', '/v1/agents', { name: 'ok', systemPrompt: '\udfffprompt' }, 'systemPrompt'],
      ['PUT', `/v1/agents/${agentId}`, { name: 'ok', systemPrompt: 'p\ud800' }, 'systemPrompt'],
      ['POST', `/v1/agents/${agentId}/instances`, { name: 'i', context: { who: '\ud83d' } }, 'context.who'],
      ['POST', '/v1/collections', { name: 'c', metadata: { k: '\ud800' } }, 'metadata.k'],
      ['POST', `/v1/collections/${collectionId}/ingest`, { documents: [{ text: 'a\udc00b' }] }, 'documents[0].text'],
      ['POST', '/v1/keys', { name: '\ud800' }, 'name'],
    ];
    for (const [method, path, json, param] of cases) {
      const body = await expect400(await p.request(path, { method, key, json }), param);
      expect(body.error.message).toMatch(/surrogate/);
    }
  });

  it('in a key is a 400 that does not echo the surrogate back', async () => {
    const res = await raw('/v1/agents', '{"name":"ok","metadata":{"k\\ud800":"v"}}');
    const body = await expect400(res, 'metadata.k\\ufffd');
    expect(body.error.message).not.toMatch(/[\ud800-\udfff]/);
  });

  it('a well-formed pair (an emoji) is accepted', async () => {
    const res = await p.request('/v1/agents', { method: 'POST', key, json: { name: 'ok 😀', metadata: { e: '😀' } } });
    expect(res.status).toBe(201);
  });
});

describe(`nesting deeper than ${MAX_JSON_DEPTH} (overflowed the stack: 500s)`, () => {
  it('6,000 deep is a 400 on collections, ingest, agents and instances', async () => {
    const deep = nested(6000);
    const routes: Array<[string, string, string]> = [
      ['/v1/collections', `{"name":"c","metadata":${deep}}`, 'metadata'],
      [`/v1/collections/${collectionId}/ingest`, `{"documents":[{"text":"t","metadata":${deep}}]}`, 'documents[0]'],
      ['/v1/agents', `{"name":"a","metadata":${deep}}`, 'metadata'],
      [`/v1/agents/${agentId}/instances`, `{"name":"i","metadata":${deep}}`, 'metadata'],
    ];
    for (const [path, body, prefix] of routes) {
      const err = await expect400(
        await raw(path, body),
        expect.stringMatching(`^${prefix.replace(/[[\]]/g, '\\$&')}`) as unknown as string,
      );
      expect(err.error.message).toMatch(new RegExp(`more than ${MAX_JSON_DEPTH} deep`));
    }
  });

  it('exactly the limit is accepted, one more is refused', async () => {
    // The body object is depth 1 and metadata depth 2, so metadata may nest MAX_JSON_DEPTH - 1 objects.
    const ok = await raw('/v1/agents', `{"name":"a","metadata":${nested(MAX_JSON_DEPTH - 1)}}`);
    expect(ok.status).toBe(201);
    const over = await raw('/v1/agents', `{"name":"a","metadata":${nested(MAX_JSON_DEPTH)}}`);
    await expect400(over, 'metadata' + '.a'.repeat(MAX_JSON_DEPTH - 1));
  });
});
