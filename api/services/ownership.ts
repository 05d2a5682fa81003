import { getAgent } from '../../shared/domains/agents/db.ts';
import { collectionOwned } from '../../shared/domains/rag/collections.ts';
import { getInstance } from '../../shared/domains/agents/instances-db.ts';
import type { Queryable } from '../../shared/kernel/db/pool.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';

/**
 * Ids that a request names in its body or query (not its path) are checked against the caller at submission:
 * another developer's id is a 404 now, never a job that fails later, a token for someone else's data, or an
 * empty 200 that reads like "no data".
 */
export async function requireOwnedAgent(db: Queryable, developerId: string, agentId: string, param = 'agentId') {
  const agent = await getAgent(db, developerId, agentId);
  if (!agent) throw new ApiError('not_found', { resource: 'agent', id: agentId }, param);
  return agent;
}

export async function requireOwnedCollection(
  db: Queryable,
  developerId: string,
  collectionId: string,
  param = 'collectionId',
): Promise<void> {
  if (!(await collectionOwned(db, developerId, collectionId))) {
    throw new ApiError('not_found', { resource: 'collection', id: collectionId }, param);
  }
}

/** The instance must belong to this developer's agent `agentId` (the agent itself is checked by the caller). */
export async function requireOwnedInstance(
  db: Queryable,
  developerId: string,
  agentId: string,
  instanceId: string,
  param = 'instanceId',
): Promise<void> {
  if (!(await getInstance(db, developerId, agentId, instanceId))) {
    throw new ApiError('not_found', { resource: 'agent instance', id: instanceId }, param);
  }
}
