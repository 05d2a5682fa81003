import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { insertDeveloper, type Tier } from '../../shared/kernel/db/developers.ts';
import { migrate } from '../../shared/kernel/db/migrate.ts';
import { createDb } from '../../shared/kernel/db/pool.ts';

const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://vap:vap@127.0.0.1:5432/postgres';

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * A throwaway migrated database with one developer and key, and an S3 folder, for a benchmark's platform
 * process. `drop()` removes both.
 */
export async function benchDatabase(
  tier: Tier = 'scale',
): Promise<{ dbUrl: string; apiKey: string; s3dir: string; drop(): Promise<void> }> {
  const dbName = `vap_bench_${randomBytes(4).toString('hex')}`;
  const dbUrl = ADMIN_URL.replace(/\/[^/]*$/, `/${dbName}`);
  const s3dir = await mkdtemp(join(tmpdir(), 'vap-bench-s3-'));
  await admin(`create database ${dbName}`);
  const db = createDb(dbUrl, 2);
  try {
    await migrate(db);
    const dev = await insertDeveloper(db, 'bench', tier);
    const { key } = await mintKey(db, dev.id, 'bench');
    return {
      dbUrl,
      apiKey: key,
      s3dir,
      async drop() {
        await admin(`drop database if exists ${dbName} with (force)`);
        await rm(s3dir, { recursive: true, force: true });
      },
    };
  } finally {
    await db.end();
  }
}
