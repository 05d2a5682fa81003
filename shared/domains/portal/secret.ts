import { randomBytes } from 'node:crypto';
import type { Config } from '../../kernel/config/index.ts';
import type { Queryable } from '../../kernel/db/pool.ts';

/**
 * The key of every portal HMAC (sign-in codes, phone numbers in Redis keys). PORTAL_SECRET when set; otherwise a
 * random 32-byte secret made by the first process that needs it and kept in Postgres, so every process (and a
 * restart) agrees without configuration. The codes live in Redis, the key in Postgres: a copy of Redis alone does
 * not allow brute-forcing the 10^6 possible codes offline.
 */
export async function loadPortalSecret(db: Queryable, config: Pick<Config, 'PORTAL_SECRET'>): Promise<Buffer> {
  if (config.PORTAL_SECRET) return Buffer.from(config.PORTAL_SECRET, 'utf8');
  await db.query(
    `insert into portal_settings (name, value) values ('otp_hmac_secret', $1) on conflict (name) do nothing`,
    [randomBytes(32).toString('base64')],
  );
  const { rows } = await db.query<{ value: string }>(
    `select value from portal_settings where name = 'otp_hmac_secret'`,
  );
  return Buffer.from(rows[0]!.value, 'base64');
}
