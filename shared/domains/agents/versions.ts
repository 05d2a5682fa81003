import type { AgentVersion } from '../../contracts/agents.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import { toAgent, type AgentRow } from './db.ts';

/**
 * Agent versions: immutable snapshots of an agent's configuration, numbered 1, 2, … per agent. They are written by
 * the database itself (migration 0901: a trigger on agents makes one on create and on every change of
 * configuration), so no writer of agents can forget one; this module only reads them.
 *
 * A snapshot is the agents row as JSON without keys, order, status, secret and timestamps: laid over the agent's
 * current row it gives the row that version ran with (`agentAtVersion`), which the realtime session and the replay
 * use exactly like a current agent.
 */
interface VersionRow {
  version: number;
  config: Partial<AgentRow>;
  created_at: Date;
}

/** The agent's row as it was at a version: the version's configuration over the current row's identity. */
export function agentAtVersion(agent: AgentRow, v: { version: number; config: Partial<AgentRow> }): AgentRow {
  // A snapshot taken before agents had `audio` (migration 0971) ran with no input processors, not the current ones.
  // Nor `variables` (migration 0984): a snapshot without them had no defaults; nor `analysis` (1050).
  return { ...agent, audio: null, variables: null, analysis: null, ...v.config, version: v.version };
}

/**
 * A snapshot's configuration as the row had it. Since migration 1095 the analysis settings are kept as their JSON
 * text (a jsonb object would sort a schema's properties); earlier snapshots hold the object itself.
 */
function snapshotConfig(config: Partial<AgentRow>): Partial<AgentRow> {
  const analysis: unknown = config.analysis;
  return typeof analysis === 'string' ? { ...config, analysis: JSON.parse(analysis) as AgentRow['analysis'] } : config;
}

/** One version of one developer's agent; null when the agent or the version does not exist for that developer. */
export async function getAgentVersion(
  db: Queryable,
  developerId: string,
  agentId: string,
  version: number,
): Promise<{ version: number; config: Partial<AgentRow>; createdAt: Date } | null> {
  const { rows } = await db.query<VersionRow>(
    `select version, config, created_at from agent_versions
      where developer_id = $1 and agent_id = $2 and version = $3`,
    [developerId, agentId, version],
  );
  const r = rows[0];
  return r ? { version: r.version, config: snapshotConfig(r.config), createdAt: r.created_at } : null;
}

/** Versions newest first, `limit` of them below `beforeVersion` (the last one of the previous page). */
export async function listAgentVersions(
  db: Queryable,
  developerId: string,
  agentId: string,
  limit: number,
  beforeVersion: number | null,
): Promise<{ version: number; config: Partial<AgentRow>; createdAt: Date }[]> {
  const { rows } = await db.query<VersionRow>(
    `select version, config, created_at from agent_versions
      where developer_id = $1 and agent_id = $2 and ($3::int is null or version < $3)
      order by version desc limit $4`,
    [developerId, agentId, beforeVersion, limit],
  );
  return rows.map((r) => ({ version: r.version, config: snapshotConfig(r.config), createdAt: r.created_at }));
}

/** The API form of a version: the agent's configuration fields as that version had them. */
export function toAgentVersion(
  agent: AgentRow,
  v: { version: number; config: Partial<AgentRow>; createdAt: Date },
): AgentVersion {
  const {
    id: _id,
    status: _status,
    createdAt: _c,
    updatedAt: _u,
    toolSigningSecret: _s,
    version: _v,
    ...config
  } = toAgent(agentAtVersion(agent, v));
  return { agentId: agent.id, version: v.version, createdAt: v.createdAt.toISOString(), config };
}
