import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import {
  getProviderKeyRow,
  openProviderKey,
  ProviderKeyCipher,
  upsertProviderKey,
} from '../../shared/platform/keys/stored-keys.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import type { HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { resolveProviderKey } from '../../shared/platform/keys/provider-key.ts';
import { startOpenAiDouble } from '../../support/doubles/openai.ts';

// Keys this file hands to the platform: none may appear in any response body or log line.
const GOOD = 'sk-good-' + randomBytes(16).toString('hex');
const BAD = 'sk-bad-' + randomBytes(16).toString('hex');
const CALLER = 'sk-caller-' + randomBytes(16).toString('hex');
const PLATFORM = 'sk-platform-' + randomBytes(16).toString('hex');
const SECRETS = [GOOD, BAD, CALLER, PLATFORM];

const logLines: string[] = [];
const bodies: string[] = [];
let platform: TestPlatform;
let openai: HttpDouble;
/** Every Authorization header the OpenAI double received, oldest first. */
const authorizations = () => openai.requests.map((r) => r.headers.authorization);

/** The real platform, like startTestPlatform, but logging everything at trace level into memory. */
beforeAll(async () => {
  openai = await startOpenAiDouble({ keys: [GOOD, CALLER, PLATFORM] });
  platform = await startTestPlatform({
    roles: ['api'],
    logLines: logLines,
    env: {
      OPENAI_BASE_URL: `${openai.url}/v1`,
      OPENAI_API_KEY: PLATFORM,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
    },
  });
});
afterAll(async () => {
  await platform?.close();
  await openai?.close();
});

async function developer() {
  const dev = await insertDeveloper(platform.infra.db, `dev-${randomBytes(3).toString('hex')}`, 'starter');
  const key = await mintKey(platform.infra.db, dev.id, 'Default');
  return { developerId: dev.id, apiKey: key.key };
}

async function call(
  path: string,
  apiKey: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, ...init.headers };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(platform.url + path, {
    method: init.method ?? 'GET',
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await res.text();
  bodies.push(text, JSON.stringify([...res.headers]));
  return { res, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

describe('stored provider keys', () => {
  it('stores encrypted, lists only the last four, verifies against the vendor, deletes', async () => {
    const { apiKey, developerId } = await developer();
    const stored = await call('/v1/provider-keys', apiKey, {
      method: 'POST',
      json: { provider: 'openai', apiKey: GOOD },
    });
    expect(stored.res.status).toBe(201);
    expect(stored.json()).toMatchObject({ provider: 'openai', lastFour: GOOD.slice(-4) });
    // Not verified yet: the string field is absent, never null (the contract's choice, see the OpenAPI document).
    expect(stored.json()).not.toHaveProperty('verifiedAt');

    const row = await getProviderKeyRow(platform.infra.db, developerId, 'openai');
    expect(row!.ciphertext.includes(Buffer.from(GOOD))).toBe(false);
    expect(row!.key_id).toBe('dev');

    const list = await call('/v1/provider-keys', apiKey);
    expect(list.json()).toEqual({
      data: [{ provider: 'openai', lastFour: GOOD.slice(-4), createdAt: expect.any(String) }],
      hasMore: false,
    });

    const seen = authorizations().length;
    const ok = await call('/v1/provider-keys/openai/verify', apiKey, { method: 'POST' });
    expect(ok.res.status).toBe(200);
    expect(ok.json()).toMatchObject({ provider: 'openai', valid: true, verifiedAt: expect.any(String) });
    expect(authorizations().slice(seen)).toEqual([`Bearer ${GOOD}`]);
    const listed = (await call('/v1/provider-keys', apiKey)).json() as { data: { verifiedAt?: string }[] };
    expect(listed.data[0]!.verifiedAt).toBe(ok.json().verifiedAt);

    // Storing again replaces the key (and clears the verification).
    await call('/v1/provider-keys', apiKey, { method: 'POST', json: { provider: 'openai', apiKey: BAD } });
    const rejected = await call('/v1/provider-keys/openai/verify', apiKey, { method: 'POST' });
    expect(rejected.res.status).toBe(200);
    expect(rejected.json()).toMatchObject({ valid: false });
    expect(rejected.json()).not.toHaveProperty('verifiedAt');

    const del = await call('/v1/provider-keys/openai', apiKey, { method: 'DELETE' });
    expect(del.res.status).toBe(204);
    expect((await call('/v1/provider-keys/openai', apiKey, { method: 'DELETE' })).res.status).toBe(404);
    expect((await call('/v1/provider-keys/openai/verify', apiKey, { method: 'POST' })).res.status).toBe(404);
    expect((await call('/v1/provider-keys/nosuch', apiKey, { method: 'DELETE' })).res.status).toBe(404);
  });

  it('answers bad input with the error envelope', async () => {
    const { apiKey } = await developer();
    for (const json of [
      { provider: 'nosuch', apiKey: GOOD },
      { provider: 'openai' },
      { provider: 'openai', apiKey: 'a b c d e f' },
    ]) {
      const r = await call('/v1/provider-keys', apiKey, { method: 'POST', json });
      expect(r.res.status).toBe(400);
      expect(r.json()).toMatchObject({ error: { code: 'validation_failed' } });
    }
    await call('/v1/provider-keys', apiKey, { method: 'POST', json: { provider: 'voyage', apiKey: GOOD } });
    const unsupported = await call('/v1/provider-keys/voyage/verify', apiKey, { method: 'POST' });
    expect(unsupported.res.status).toBe(400);
    expect(unsupported.json()).toMatchObject({ error: { code: 'verification_unsupported' } });
  });

  it('resolves header → stored → platform, and only the platform key is billable', async () => {
    const { apiKey, developerId } = await developer();
    const keys = { storedKeys: platform.infra.storedKeys, config: { vendors: { platformKeys: { openai: PLATFORM } } } };
    const target = { vendor: 'openai', developerId };
    expect(await resolveProviderKey(keys, target)).toEqual({ key: PLATFORM, source: 'platform', billable: true });
    // A vendor whose contract asks for the caller's own key never falls back to the platform's.
    await expect(resolveProviderKey(keys, { ...target, callerKeyOnly: true })).rejects.toMatchObject({
      status: 400,
      code: 'provider_unavailable',
      param: 'provider',
      message:
        'Provider "openai" is not available: no API key: send the X-Provider-Key-Openai header, store one with POST /v1/provider-keys, or ask the operator to configure a platform key',
    });
    await call('/v1/provider-keys', apiKey, { method: 'POST', json: { provider: 'openai', apiKey: GOOD } });
    expect(await resolveProviderKey(keys, target)).toEqual({ key: GOOD, source: 'stored', billable: false });
    expect(await resolveProviderKey(keys, { ...target, headers: { 'x-provider-key-openai': CALLER } })).toEqual({
      key: CALLER,
      source: 'header',
      billable: false,
    });
    // An engine that runs here needs no key, whatever the caller sent.
    const local = { provider: 'openai', capabilities: { requiresKey: false } };
    expect(await resolveProviderKey(keys, { engine: local, developerId })).toBeNull();
  });

  it('through a real metered route: a caller key bypasses metering, a stored key is used without a header', async () => {
    const { apiKey, developerId } = await developer();
    const col = await call('/v1/collections', apiKey, {
      method: 'POST',
      json: { name: 'byok', embeddingProvider: 'openai' },
    });
    expect(col.res.status).toBe(201);
    const id = col.json().id as string;

    const ingest = await call(`/v1/collections/${id}/ingest`, apiKey, {
      method: 'POST',
      json: { content: 'The quick brown fox jumps over the lazy dog. '.repeat(20) },
      headers: { 'X-Provider-Key-OpenAI': CALLER },
    });
    expect(ingest.res.status).toBe(201);
    expect(ingest.res.headers.get('x-usage-bypassed')).toBe('true');
    expect(ingest.res.headers.get('x-provider-used')).toBe('openai');
    expect(ingest.res.headers.get('x-usage-current')).toBe('0');
    expect(authorizations().at(-1)).toBe(`Bearer ${CALLER}`);

    // No header, no stored key: the platform key serves it and credits are charged.
    const charged = await call(`/v1/collections/${id}/ingest`, apiKey, {
      method: 'POST',
      json: { content: 'Pack my box with five dozen liquor jugs. '.repeat(20) },
    });
    expect(charged.res.status).toBe(201);
    expect(charged.res.headers.get('x-usage-bypassed')).toBe('false');
    expect(Number(charged.res.headers.get('x-usage-current'))).toBeGreaterThan(0);
    expect(authorizations().at(-1)).toBe(`Bearer ${PLATFORM}`);
    const usedAfterCharge = charged.res.headers.get('x-usage-current');

    // A stored key is used when no header is given, and is not metered either.
    await call('/v1/provider-keys', apiKey, { method: 'POST', json: { provider: 'openai', apiKey: GOOD } });
    const viaStored = await call(`/v1/collections/${id}/ingest`, apiKey, {
      method: 'POST',
      json: { content: 'Sphinx of black quartz, judge my vow. '.repeat(20) },
    });
    expect(viaStored.res.status).toBe(201);
    expect(authorizations().at(-1)).toBe(`Bearer ${GOOD}`);
    expect(viaStored.res.headers.get('x-usage-bypassed')).toBe('true');
    expect(viaStored.res.headers.get('x-usage-current')).toBe(usedAfterCharge);

    const { rows } = await platform.infra.db.query<{ billable: boolean; credits: number }>(
      'select billable, credits from credit_ledger where developer_id = $1 and not billable',
      [developerId],
    );
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows.every((r) => r.credits === 0)).toBe(true);
  });

  it('rotates master keys: an old key still opens and is re-sealed under the current one', async () => {
    const { developerId } = await developer();
    const a = { id: 'a', key: randomBytes(32) };
    const b = { id: 'b', key: randomBytes(32) };
    await upsertProviderKey(platform.infra.db, new ProviderKeyCipher([a]), developerId, 'deepgram', GOOD);
    const rotated = new ProviderKeyCipher([b, a]);
    const row = await getProviderKeyRow(platform.infra.db, developerId, 'deepgram');
    expect(await openProviderKey(platform.infra.db, rotated, row!)).toBe(GOOD);
    const after = await getProviderKeyRow(platform.infra.db, developerId, 'deepgram');
    expect(after!.key_id).toBe('b');
    expect(await openProviderKey(platform.infra.db, new ProviderKeyCipher([b]), after!)).toBe(GOOD);
    // Bound to its row: the same ciphertext under another provider name does not open.
    expect(
      new ProviderKeyCipher([b]).open(developerId, 'openai', {
        keyId: 'b',
        iv: after!.iv,
        ciphertext: after!.ciphertext,
        authTag: after!.auth_tag,
      }),
    ).toBeNull();
  });

  it('never shows a key in any response or log line', () => {
    expect(logLines.length).toBeGreaterThan(0);
    for (const secret of SECRETS) {
      for (const line of logLines) expect(line).not.toContain(secret);
      for (const body of bodies) expect(body).not.toContain(secret);
    }
  });
});
