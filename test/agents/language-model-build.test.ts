import { readdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
let key: string;
let dir: string;

/** The models built so far (a folder per content hash, complete once renamed into place). */
async function models(): Promise<string[]> {
  return (await readdir(dir)).filter((f) => /^[0-9a-f]{32}$/.test(f)).sort();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vap-lm-agents-'));
  p = await startTestPlatform({
    roles: ['api'],
    env: { SPEECH_LM_DIR: dir, SPEECH_LM_AUTO_BUILD: 'true', SPEECH_LM_BUILD_TIMEOUT_MS: '600000' },
  });
  ({ apiKey: key } = await p.developer('pro'));
});

afterAll(async () => {
  await p?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("an agent's language model", () => {
  it('is built in the background when the agent is saved, and again when its words change', async () => {
    const created = await p.request('/v1/agents', {
      method: 'POST',
      key,
      json: { name: 'clinic', systemPrompt: 'You answer questions about the Maple Street clinic and Doctor Patel.' },
    });
    expect(created.status).toBe(201); // answered at once: the build is not on the request path
    const { id } = (await created.json()) as { id: string };
    const first = await waitUntil(async () => (await models()).length === 1 && (await models()), 420_000);
    const updated = await p.request(`/v1/agents/${id}`, {
      method: 'PUT',
      key,
      json: { systemPrompt: 'You take table bookings for the Harbor Road trattoria.' },
    });
    expect(updated.status).toBe(200);
    const both = await waitUntil(async () => (await models()).length === 2 && (await models()), 420_000);
    expect(both).toEqual(expect.arrayContaining(first));
    // Saving without changing its words builds nothing new.
    await p.request(`/v1/agents/${id}`, { method: 'PUT', key, json: { name: 'renamed' } });
    await new Promise((r) => setTimeout(r, 3000));
    expect(await models()).toEqual(both);
  }, 900_000);
});
