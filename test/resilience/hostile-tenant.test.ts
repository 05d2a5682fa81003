import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  backtrackingPattern,
  fileWebhook,
  traversalKey,
  unspeakableWord,
  type Tenant,
} from '../../support/abuse/hostile-tenant.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue #35 items 1, 2, 3 and 8 at once against one platform, as one hostile tenant would send them: a backtracking
 * pattern, a key that climbs into another tenant's recording, three syntheses of a 9,000-letter word and a
 * `file://` webhook. Each is refused or answered right (outcomes, not timings; `npm run test:abuse` measures what
 * they cost another developer's call).
 */
let p: TestPlatform;
let hostile: Tenant;
let victim: { developerId: string; key: string };

beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api', 'cpu'],
    env: { TWILIO_ACCOUNT_SID: 'AC00000000000000000000000000000035', TWILIO_AUTH_TOKEN: 'token-issue-35' },
  });
  const a = await p.developer('pro');
  const b = await p.developer('pro');
  victim = { developerId: b.developerId, key: `${b.developerId}/recordings/ses_private.wav` };
  await p.infra.storage.put(victim.key, Buffer.from('RIFF-private-call-audio'), 'audio/wav');
  const r = await p.request('/v1/agents', {
    method: 'POST',
    key: a.apiKey,
    json: { name: 'Front desk', firstMessage: 'Hello.' },
  });
  expect(r.status).toBe(201);
  hostile = {
    url: p.url,
    apiKey: a.apiKey,
    developerId: a.developerId,
    agentId: ((await r.json()) as { id: string }).id,
  };
}, 120_000);

afterAll(() => p?.close());

describe('one hostile tenant, four reproductions at once', () => {
  it('refuses or evaluates each, and leaks nothing of the other tenant', async () => {
    const outcomes = await Promise.all([
      backtrackingPattern(hostile, { timeoutMs: 90_000 }),
      traversalKey(hostile, victim),
      unspeakableWord(hostile, 3),
      fileWebhook(hostile),
    ]);
    // Whatever is not contained is shown with its details.
    expect(outcomes.filter((o) => o.contained !== true)).toEqual([]);
    expect(outcomes[0]!.detail).toMatch(/evaluated|refused/);
    expect(outcomes[1]!.detail).toMatch(/^5 keys answered 400, 400, 400, 400, 400; 0 answers/);
    // The other tenant's object is untouched.
    expect((await p.infra.storage.getBuffer(victim.key)).toString()).toBe('RIFF-private-call-audio');
  }, 150_000);
});
