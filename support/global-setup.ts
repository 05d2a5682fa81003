import pg from 'pg';
import { migrate } from '../shared/kernel/db/migrate.ts';
import { createDb } from '../shared/kernel/db/pool.ts';
import { ADMIN_URL, adminQuery, dbUrl, templateName } from './helpers/db.ts';

/**
 * Builds the migrated template database once per run (if this set of migrations has none yet); every test file
 * clones it. Test databases more than two hours old (left by killed runs) are dropped; other runs may be going
 * on at the same time (with another set of migrations, so another template), so nothing younger is touched and
 * templates are kept.
 */
export default async function setup(): Promise<void> {
  const name = templateName();
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  const { rows } = await c.query<{ datname: string }>(
    "select datname from pg_database where datname like 'vap_tmpl_%' or datname like 'vap_t_%'",
  );
  await c.end();
  const cutoff = Date.now() / 1000 - 2 * 3600;
  for (const r of rows) {
    const stamp = /^vap_t_(\d+)_/.exec(r.datname);
    if (stamp && Number(stamp[1]) < cutoff) {
      await adminQuery(`drop database if exists ${r.datname} with (force)`).catch(() => {});
    }
  }
  if (!rows.some((r) => r.datname === name)) {
    await adminQuery(`create database ${name}`);
    const db = createDb(dbUrl(name), 1);
    try {
      await migrate(db);
    } catch (e) {
      await db.end();
      await adminQuery(`drop database if exists ${name} with (force)`);
      throw e;
    }
    await db.end();
  }
}
