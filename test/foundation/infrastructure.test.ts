import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/kernel/config/index.ts';
import { migrate } from '../../shared/kernel/db/migrate.ts';
import { createDb } from '../../shared/kernel/db/pool.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { adminQuery, dbUrl } from '../../support/helpers/db.ts';

describe('migrations', () => {
  it('apply exactly once when several processes start at the same time', async () => {
    const name = `vap_t_${Math.floor(Date.now() / 1000)}_mig${randomBytes(3).toString('hex')}`;
    await adminQuery(`create database ${name}`);
    const pools = Array.from({ length: 4 }, () => createDb(dbUrl(name), 2));
    try {
      const results = await Promise.all(pools.map((db) => migrate(db)));
      const files = readdirSync(new URL('../../shared/kernel/db/migrations/', import.meta.url)).filter((f) =>
        f.endsWith('.sql'),
      );
      // Every file was applied by exactly one of the racing processes.
      expect(results.flat().sort()).toEqual(files.sort());
      const { rows } = await pools[0]!.query('select count(*)::int as n from schema_migrations');
      expect(rows[0].n).toBe(files.length);
      const ext = await pools[0]!.query("select 1 from pg_extension where extname = 'vector'");
      expect(ext.rowCount).toBe(1);
      expect(await migrate(pools[0]!)).toEqual([]);
    } finally {
      await Promise.all(pools.map((db) => db.end()));
      await adminQuery(`drop database if exists ${name} with (force)`);
    }
  });
});

describe('configuration', () => {
  it('fails fast naming the bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ RATE_LIMITS: 'starter=5' })).toThrow(/RATE_LIMITS/);
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'not a url' })).toThrow(/PUBLIC_BASE_URL/);
  });

  it('defaults point at local services', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.DATABASE_URL).toContain('127.0.0.1');
    expect(c.REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(c.s3Embedded).toBe(true);
    expect(c.rateLimits).toEqual({ starter: 120, pro: 600, scale: 3000 });
  });
});

describe('S3 storage', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ roles: ['api'] });
  });
  afterAll(() => p?.close());

  it('round-trips a streamed upload byte for byte', async () => {
    // 9 MB in odd-sized chunks of unknown total length: a multipart upload through the real client.
    const data = randomBytes(9 * 1024 * 1024 + 123);
    const chunks = [];
    for (let i = 0; i < data.length; i += 65_537) chunks.push(data.subarray(i, i + 65_537));
    await p.infra.storage.put('t/roundtrip.bin', Readable.from(chunks));
    const back = await p.infra.storage.getBuffer('t/roundtrip.bin');
    expect(back.length).toBe(data.length);
    expect(back.equals(data)).toBe(true);
    const url = await p.infra.storage.presignGet('t/roundtrip.bin');
    const viaUrl = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(viaUrl.equals(data)).toBe(true);
  });

  it('reports S3 down on /readyz with 503', async () => {
    await p.infra.embeddedS3!.close();
    const res = await p.request('/readyz');
    expect(res.status).toBe(503);
    const body = (await res.json()) as { checks: Record<string, string> };
    expect(body.checks.postgres).toBe('ok');
    expect(body.checks.s3).not.toBe('ok');
  });
});
