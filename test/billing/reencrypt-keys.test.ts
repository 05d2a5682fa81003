import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reencryptProviderKeys, type ReencryptReport } from '../../shared/domains/billing/reencrypt-keys.ts';
import {
  getProviderKeyRow,
  openProviderKey,
  providerKeyCipher,
  sealedOf,
  upsertProviderKey,
} from '../../shared/platform/keys/stored-keys.ts';
import { loadConfig, type Config } from '../../shared/kernel/config/index.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import { createDb, type Db } from '../../shared/kernel/db/pool.ts';
import { createTestDatabase } from '../../support/helpers/db.ts';

// `npm run cli -- provider-keys reencrypt` and the function behind it, on a real database.
const OLD = randomBytes(32).toString('base64');
const NEW = randomBytes(32).toString('base64');
const GONE = randomBytes(32).toString('base64');

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;
let env: Record<string, string>;
const configWith = (keys: string): Config => loadConfig({ ...env, PROVIDER_KEYS_ENCRYPTION_KEYS: keys });
let before: Config; // only the old master key: what the platform ran with when the keys were stored
let rotated: Config; // the new key first, the old one kept: what the command runs with
let newOnly: Config; // after the old key is removed

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDb(database.url, 4);
  env = {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
  };
  before = configWith(`old:${OLD}`);
  rotated = configWith(`new:${NEW},old:${OLD}`);
  newOnly = configWith(`new:${NEW}`);
});
afterAll(async () => {
  await db?.end();
  await database?.drop();
});

/** Stored keys are per developer and provider: `n` of them under `config`'s current master key. */
async function storeKeys(n: number, config: Config): Promise<Map<string, string>> {
  const stored = new Map<string, string>();
  const providers = ['openai', 'deepgram', 'elevenlabs', 'anthropic'];
  let dev = '';
  for (let i = 0; i < n; i++) {
    if (i % providers.length === 0)
      dev = (await insertDeveloper(db, `dev-${randomBytes(3).toString('hex')}`, 'starter')).id;
    const provider = providers[i % providers.length]!;
    const plain = `sk-${provider}-${randomBytes(12).toString('hex')}`;
    await upsertProviderKey(db, providerKeyCipher(config), dev, provider, plain);
    stored.set(`${dev}/${provider}`, plain);
  }
  return stored;
}

/** Every stored key, opened under `config` (null where it does not open). */
async function openAll(config: Config): Promise<Map<string, string | null>> {
  const cipher = providerKeyCipher(config);
  const { rows } = await db.query<{ developer_id: string; provider: string }>(
    'select developer_id, provider from provider_keys',
  );
  const out = new Map<string, string | null>();
  for (const { developer_id, provider } of rows) {
    const row = (await getProviderKeyRow(db, developer_id, provider))!;
    out.set(`${developer_id}/${provider}`, cipher.open(developer_id, provider, sealedOf(row)));
  }
  return out;
}

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/cli.ts', ...args],
      { env: { ...env, PROVIDER_KEYS_ENCRYPTION_KEYS: `new:${NEW},old:${OLD}` }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function clear(): Promise<void> {
  await db.query('delete from provider_keys');
}

describe('provider-keys reencrypt', () => {
  it('re-seals every old key in batches, reports the rest, and is a no-op the second time', async () => {
    await clear();
    const old = await storeKeys(7, before);
    const current = await storeKeys(2, rotated);
    // Sealed under a master key nobody configured any more: reported, left alone.
    const [lost] = [...(await storeKeys(1, configWith(`gone:${GONE}`))).keys()];

    const dry = await reencryptProviderKeys(db, rotated, { dryRun: true, batchSize: 3 });
    expect(dry).toMatchObject({ dryRun: true, scanned: 10, resealed: 7, alreadyCurrent: 2, deleted: 0 });
    expect((await db.query("select 1 from provider_keys where key_id = 'old'")).rowCount).toBe(7);

    const progress: ReencryptReport[] = [];
    const report = await reencryptProviderKeys(db, rotated, { batchSize: 3, onBatch: (r) => progress.push(r) });
    expect(report).toMatchObject({ currentKeyId: 'new', scanned: 10, resealed: 7, alreadyCurrent: 2, deleted: 0 });
    expect(report.failed).toEqual([
      {
        developerId: lost!.split('/')[0],
        provider: lost!.split('/')[1],
        keyId: 'gone',
        reason: 'master key "gone" is not in PROVIDER_KEYS_ENCRYPTION_KEYS',
      },
    ]);
    expect(progress.map((p) => p.scanned)).toEqual([3, 6, 9, 10]);

    // With the old master key removed, every key opens to what the developer stored.
    const opened = await openAll(newOnly);
    for (const [id, plain] of [...old, ...current]) expect(opened.get(id)).toBe(plain);

    const again = await reencryptProviderKeys(db, rotated);
    expect(again).toMatchObject({ scanned: 10, resealed: 0, alreadyCurrent: 9 });
    expect(again.failed).toHaveLength(1);
  });

  it('two runs at once re-seal each key exactly once', async () => {
    await clear();
    const old = await storeKeys(12, before);
    const [a, b] = await Promise.all([
      reencryptProviderKeys(db, rotated, { batchSize: 2 }),
      reencryptProviderKeys(db, rotated, { batchSize: 5 }),
    ]);
    expect(a.resealed + b.resealed).toBe(12);
    expect(a.resealed + a.alreadyCurrent).toBe(12);
    expect(b.resealed + b.alreadyCurrent).toBe(12);
    const opened = await openAll(newOnly);
    for (const [id, plain] of old) expect(opened.get(id)).toBe(plain);
  });

  it('never overwrites a key replaced while it runs', async () => {
    await clear();
    const old = await storeKeys(16, before);
    // A process still running with the old configuration replaces every key while the command runs.
    const replaced = new Map<string, string>();
    const replacing = (async () => {
      for (const id of old.keys()) {
        const [dev, provider] = id.split('/') as [string, string];
        const plain = `sk-replaced-${randomBytes(12).toString('hex')}`;
        await upsertProviderKey(db, providerKeyCipher(before), dev, provider, plain);
        replaced.set(id, plain);
      }
    })();
    const first = await reencryptProviderKeys(db, rotated, { batchSize: 1 });
    await replacing;
    expect(first.failed).toEqual([]);
    // Keys stored under the old key after the pass went by are picked up by the next run.
    await reencryptProviderKeys(db, rotated);
    const opened = await openAll(newOnly);
    for (const [id, plain] of replaced) expect(opened.get(id)).toBe(plain);

    // The re-seal on read is a compare-and-set too: a row read before its replacement is not written back.
    const [dev, provider] = [...old.keys()][0]!.split('/') as [string, string];
    await upsertProviderKey(db, providerKeyCipher(before), dev, provider, 'sk-stale-read');
    const stale = (await getProviderKeyRow(db, dev, provider))!;
    await upsertProviderKey(db, providerKeyCipher(before), dev, provider, 'sk-newest');
    expect(await openProviderKey(db, providerKeyCipher(rotated), stale)).toBe('sk-stale-read');
    const now = (await getProviderKeyRow(db, dev, provider))!;
    expect(providerKeyCipher(rotated).open(dev, provider, sealedOf(now))).toBe('sk-newest');
  });

  it('runs as `npm run cli -- provider-keys reencrypt`: progress, counts, exit 1 on a failed key', async () => {
    await clear();
    const old = await storeKeys(5, before);
    await storeKeys(1, rotated);
    // One old key damaged at rest: it cannot be opened, so it cannot be re-sealed.
    const [damaged] = [...old.keys()];
    const [dev, provider] = damaged!.split('/') as [string, string];
    await db.query(
      "update provider_keys set ciphertext = ciphertext || '\\x00'::bytea where developer_id = $1 and provider = $2",
      [dev, provider],
    );

    const run = await runCli(['provider-keys', 'reencrypt', '--batch', '2']);
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as ReencryptReport;
    expect(out).toMatchObject({ currentKeyId: 'new', dryRun: false, scanned: 6, resealed: 4, alreadyCurrent: 1 });
    expect(out.failed).toEqual([
      { developerId: dev, provider, keyId: 'old', reason: expect.stringMatching(/does not decrypt/) },
    ]);
    const lines = run.stderr.split('\n').filter((l) => l.startsWith('provider-keys reencrypt:'));
    expect(lines).toEqual([
      expect.stringMatching(/^provider-keys reencrypt: 2 scanned, /),
      expect.stringMatching(/^provider-keys reencrypt: 4 scanned, /),
      'provider-keys reencrypt: 6 scanned, 4 re-sealed, 1 already current, 0 deleted meanwhile, 1 failed',
    ]);
    // No key material in anything the command printed.
    for (const plain of old.values()) expect(run.stdout + run.stderr).not.toContain(plain);

    // The damaged key deleted (its developer stores it again), the run passes.
    await db.query('delete from provider_keys where developer_id = $1 and provider = $2', [dev, provider]);
    const clean = await runCli(['provider-keys', 'reencrypt']);
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout.trim().split('\n').at(-1)!)).toMatchObject({ resealed: 0, alreadyCurrent: 5 });
  });
});
