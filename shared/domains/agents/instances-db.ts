import { ifSet } from '../../contracts/absent.ts';
import type { AgentInstance, CreateInstanceBody } from '../../contracts/agents.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import { newId } from '../../kernel/ids.ts';

export interface InstanceRow {
  developer_id: string;
  agent_id: string;
  id: string;
  name: string;
  phone_number: string | null;
  context: Record<string, string | number | boolean>;
  metadata: Record<string, unknown>;
  created_at: Date;
}

export function toInstance(r: InstanceRow): AgentInstance {
  return {
    id: r.id,
    agentId: r.agent_id,
    name: r.name,
    ...ifSet('phoneNumber', r.phone_number),
    context: r.context,
    metadata: r.metadata,
    createdAt: r.created_at.toISOString(),
  };
}

export async function insertInstance(
  db: Queryable,
  developerId: string,
  agentId: string,
  b: CreateInstanceBody,
): Promise<InstanceRow> {
  const { rows } = await db.query<InstanceRow>(
    `insert into agent_instances (developer_id, agent_id, id, name, phone_number, context, metadata)
     values ($1, $2, $3, $4, $5, $6, $7) returning *`,
    [
      developerId,
      agentId,
      newId('instance'),
      b.name,
      b.phoneNumber,
      JSON.stringify(b.context),
      JSON.stringify(b.metadata),
    ],
  );
  return rows[0]!;
}

export async function getInstance(
  db: Queryable,
  developerId: string,
  agentId: string,
  id: string,
): Promise<InstanceRow | null> {
  const { rows } = await db.query<InstanceRow>(
    'select * from agent_instances where developer_id = $1 and agent_id = $2 and id = $3',
    [developerId, agentId, id],
  );
  return rows[0] ?? null;
}

export async function findInstanceByPhone(
  db: Queryable,
  developerId: string,
  agentId: string,
  phone: string,
): Promise<InstanceRow | null> {
  const { rows } = await db.query<InstanceRow>(
    'select * from agent_instances where developer_id = $1 and agent_id = $2 and phone_number = $3',
    [developerId, agentId, phone],
  );
  return rows[0] ?? null;
}

export async function listInstances(
  db: Queryable,
  developerId: string,
  agentId: string,
  limit: number,
  beforeId: string | null,
): Promise<InstanceRow[]> {
  const { rows } = await db.query<InstanceRow>(
    `select * from agent_instances where developer_id = $1 and agent_id = $2 and ($3::text is null or id < $3)
      order by id desc limit $4`,
    [developerId, agentId, beforeId, limit],
  );
  return rows;
}

export async function deleteInstance(
  db: Queryable,
  developerId: string,
  agentId: string,
  id: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    'delete from agent_instances where developer_id = $1 and agent_id = $2 and id = $3',
    [developerId, agentId, id],
  );
  return (rowCount ?? 0) > 0;
}
