import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

/** Admin connection used to create and drop throwaway databases. */
export const ADMIN_URL = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://vap:vap@127.0.0.1:5432/postgres';

export function dbUrl(name: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The template's name changes whenever a migration changes, so a stale template is never reused. */
export function templateName(): string {
  const dir = new URL('../../shared/kernel/db/migrations/', import.meta.url);
  const h = createHash('sha256');
  for (const f of readdirSync(dir).sort()) h.update(f).update(readFileSync(new URL(f, dir)));
  return `vap_tmpl_${h.digest('hex').slice(0, 12)}`;
}

export async function adminQuery(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** A fresh database cloned from the migrated template (fast: a file copy, no migrations). */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  // The creation time in the name lets a later run sweep databases that a killed run left behind.
  const name = `vap_t_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  // Concurrent clones of one template can collide on its lock; retry briefly.
  for (let i = 0; ; i++) {
    try {
      await adminQuery(`create database ${name} template ${templateName()}`);
      break;
    } catch (e) {
      if (i >= 20 || !/being accessed by other users/.test((e as Error).message)) throw e;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  return {
    url: dbUrl(name),
    drop: () => adminQuery(`drop database if exists ${name} with (force)`),
  };
}
