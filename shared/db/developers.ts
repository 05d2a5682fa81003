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

export async function getDeveloper(db: Queryable, id: string): Promise<DeveloperRow | null> {
  const { rows } = await db.query<DeveloperRow>('select id, name, tier, created_at from developers where id = $1', [
    id,
  ]);
  return rows[0] ?? null;
}
