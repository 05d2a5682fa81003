import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue 34: the agent list's cursor is the agent's global sequence number, so on a fresh deployment the first
 * nine agents have one-digit cursors ("v1:1"…"v1:9"), which the shared cursor check refused as too short: 400
 * `invalid_cursor` right after a page that said `hasMore: true`. Each test file runs on its own new database, so
 * these are the first agents this deployment ever made.
 */
let p: TestPlatform;
let key: string;
const made: string[] = [];
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  key = (await p.developer()).apiKey;
  for (let i = 0; i < 12; i++) {
    const res = await p.request('/v1/agents', { method: 'POST', key, json: { name: `agent ${i}` } });
    expect(res.status).toBe(201);
    made.push(((await res.json()) as { id: string }).id);
  }
});
afterAll(() => p?.close());

interface AgentPage {
  data: { id: string }[];
  nextCursor?: string;
  hasMore: boolean;
}

describe('GET /v1/agents on a fresh database', () => {
  it.each([1, 2, 3, 4, 5])('walks all 12 agents, newest first, at limit=%i', async (limit) => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages <= 12; pages++) {
      const q = cursor ? `limit=${limit}&cursor=${cursor}` : `limit=${limit}`;
      const res = await p.request(`/v1/agents?${q}`, { key });
      expect(res.status).toBe(200);
      const page = (await res.json()) as AgentPage;
      seen.push(...page.data.map((a) => a.id));
      expect(page.hasMore).toBe(page.nextCursor !== undefined);
      if (!page.hasMore) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual([...made].reverse());
  });

  it('still refuses a cursor with no key after its prefix', async () => {
    const empty = Buffer.from('v1:').toString('base64url');
    const res = await p.request(`/v1/agents?cursor=${empty}`, { key });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_cursor');
  });
});
