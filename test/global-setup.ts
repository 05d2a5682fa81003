import pg from 'pg';
import { migrate } from '../shared/db/migrate.ts';
import { createDb } from '../shared/db/pool.ts';
import { ADMIN_URL, adminQuery, dbUrl, templateName } from './helpers/db.ts';

/**
 * Builds the migrated template database once per run (if this set of migrations has none yet); every test file
 * clones it. Old templates and leftover test databases from killed runs are dropped.
 */
export default async function setup(): Promise<void> {
  const name = templateName();
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  const { rows } = await c.query<{ datname: string }>(
    "select datname from pg_database where datname like 'vap_tmpl_%' or datname like 'vap_t_%'",
  );
  await c.end();
  for (const r of rows) {
    if (r.datname !== name) await adminQuery(`drop database if exists ${r.datname} with (force)`).catch(() => {});
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
