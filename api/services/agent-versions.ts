import { listAgentVersions, getAgentVersion, toAgentVersion } from '../../shared/domains/agents/versions.ts';
import type { AgentVersion } from '../../shared/contracts/agents.ts';
import type { Queryable } from '../../shared/kernel/db/pool.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { cursorField, decodeCursor, encodeCursor, type Page } from '../../shared/kernel/pagination.ts';
import { requireAgent } from './agents.ts';

/** GET /v1/agents/:id/versions: newest first. Another developer's agent is 404 like a missing one. */
export async function listVersions(
  db: Queryable,
  developerId: string,
  agentId: string,
  limit: number,
  cursor?: string,
): Promise<Page<AgentVersion>> {
  const agent = await requireAgent(db, developerId, agentId);
  // The cursor is the last version shown, as "ver:N" (the prefix keeps cursors already handed out valid).
  const after = decodeCursor(cursor);
  const m = after === null ? null : /^ver:(\d{1,9})$/.exec(after);
  if (after !== null && !m) throw new ApiError('invalid_cursor', {}, 'cursor');
  const rows = await listAgentVersions(db, developerId, agentId, limit + 1, m ? Number(m[1]) : null);
  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return {
    data: kept.map((v) => toAgentVersion(agent, v)),
    ...cursorField(hasMore, () => last && encodeCursor(`ver:${last.version}`)),
    hasMore,
  };
}

/** GET /v1/agents/:id/versions/:version. */
export async function getVersion(
  db: Queryable,
  developerId: string,
  agentId: string,
  version: number,
): Promise<AgentVersion> {
  const agent = await requireAgent(db, developerId, agentId);
  const v = await getAgentVersion(db, developerId, agentId, version);
  if (!v) throw ApiError.notFound('agent version', `${agentId}@${version}`);
  return toAgentVersion(agent, v);
}
