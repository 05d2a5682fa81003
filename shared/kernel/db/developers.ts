import { newId } from '../ids.ts';
import type { Queryable } from './pool.ts';

export const TIERS = ['starter', 'pro', 'scale'] as const;
export type Tier = (typeof TIERS)[number];

export interface DeveloperRow {
  id: string;
  name: string;
  tier: Tier;
  created_at: Date;
}

export async function insertDeveloper(db: Queryable, name: string, tier: Tier): Promise<DeveloperRow> {
  const { rows } = await db.query<DeveloperRow>(
    'insert into developers (id, name, tier) values ($1, $2, $3) returning id, name, tier, created_at',
    [newId('developer'), name, tier],
  );
  return rows[0]!;
}

export async function listDevelopers(db: Queryable): Promise<DeveloperRow[]> {
  const { rows } = await db.query<DeveloperRow>('select id, name, tier, created_at from developers order by id');
  return rows;
}

/** SQL scalar subquery: the tier of the developer whose id is the SQL expression `developerId` (null if none). */
export function developerTierSql(developerId: string): string {
  return `(select tier from developers where id = ${developerId})`;
}

export async function getDeveloper(db: Queryable, id: string): Promise<DeveloperRow | null> {
  const { rows } = await db.query<DeveloperRow>('select id, name, tier, created_at from developers where id = $1', [
    id,
  ]);
  return rows[0] ?? null;
}

/** The developer's tier, its row locked for the rest of the caller's transaction; null when there is none. */
export async function lockDeveloperTier(db: Queryable, id: string): Promise<Tier | null> {
  const { rows } = await db.query<{ tier: Tier }>('select tier from developers where id = $1 for update', [id]);
  return rows[0]?.tier ?? null;
}

/** A developer as the portal shows it: with the phone it signs in with (null for developers made by the CLI). */
export interface PhoneDeveloperRow extends DeveloperRow {
  phone: string | null;
}

const PHONE_COLUMNS = 'id, name, tier, created_at, phone';

export async function findDeveloperByPhone(db: Queryable, phone: string): Promise<PhoneDeveloperRow | null> {
  const { rows } = await db.query<PhoneDeveloperRow>(`select ${PHONE_COLUMNS} from developers where phone = $1`, [
    phone,
  ]);
  return rows[0] ?? null;
}

export async function getPhoneDeveloper(db: Queryable, id: string): Promise<PhoneDeveloperRow | null> {
  const { rows } = await db.query<PhoneDeveloperRow>(`select ${PHONE_COLUMNS} from developers where id = $1`, [id]);
  return rows[0] ?? null;
}

/** Creates a developer that signs in with `phone`; null when the phone already belongs to another developer. */
export async function insertPhoneDeveloper(
  db: Queryable,
  name: string,
  tier: Tier,
  phone: string,
): Promise<PhoneDeveloperRow | null> {
  const { rows } = await db.query<PhoneDeveloperRow>(
    `insert into developers (id, name, tier, phone) values ($1, $2, $3, $4)
     on conflict (phone) do nothing returning ${PHONE_COLUMNS}`,
    [newId('developer'), name, tier, phone],
  );
  return rows[0] ?? null;
}

/**
 * Sets the phone an existing developer signs in with. Returns 'taken' when another developer has it, 'missing'
 * when there is no such developer.
 */
export async function attachPhone(
  db: Queryable,
  developerId: string,
  phone: string,
): Promise<PhoneDeveloperRow | 'taken' | 'missing'> {
  const owner = await findDeveloperByPhone(db, phone);
  if (owner && owner.id !== developerId) return 'taken';
  try {
    const { rows } = await db.query<PhoneDeveloperRow>(
      `update developers set phone = $2 where id = $1 returning ${PHONE_COLUMNS}`,
      [developerId, phone],
    );
    return rows[0] ?? 'missing';
  } catch (e) {
    // Another developer took the phone between the check and the update (unique_violation).
    if ((e as { code?: string }).code === '23505') return 'taken';
    throw e;
  }
}
