import { isIP } from 'node:net';
import {
  archiveAgent,
  getAgent,
  insertAgent,
  listActiveAgents,
  setToolSecret,
  toAgent,
  updateAgent,
  type AgentRow,
} from '../../shared/domains/agents/db.ts';
import { collectionOwned } from '../../shared/domains/rag/collections.ts';
import {
  deleteInstance,
  getInstance,
  insertInstance,
  listInstances,
  toInstance,
} from '../../shared/domains/agents/instances-db.ts';
import { compileToolSchema } from '../../shared/domains/agents/tools/tool-schema.ts';
import type {
  Agent,
  AgentInstance,
  AgentTool,
  CreateAgentBody,
  CreateInstanceBody,
  ToolSigningSecret,
  UpdateAgentBody,
} from '../../shared/contracts/agents.ts';
import type { AnalysisSettings } from '../../shared/contracts/call-analysis.ts';
import { isUniqueViolation, type Queryable } from '../../shared/kernel/db/pool.ts';
import { DEFAULT_LLM_MODELS } from '../../shared/engines/llm/registry.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { AddressPolicy } from '../../shared/kernel/net/address-policy.ts';
import { cursorField, decodeCursor, encodeCursor, type Page } from '../../shared/kernel/pagination.ts';
import { newWebhookSecret } from '../../shared/domains/webhooks/standard-webhooks.ts';

const PUBLIC_ONLY = new AddressPolicy([]);

/** Checks what the contract's zod schema cannot: tool URLs against the address policy, and that schemas compile. */
export function checkTools(tools: AgentTool[] | undefined, policy: AddressPolicy): void {
  checkToolUrls(tools ?? [], policy);
  checkToolParameters(tools ?? []);
}

/** A structured-data schema must compile: the model's data is checked against it after every call. */
export function checkAnalysis(analysis: AnalysisSettings | null | undefined): void {
  const schema = analysis?.structuredData?.schema;
  if (!schema) return;
  const compiled = compileToolSchema(schema);
  if (!compiled.ok) {
    const param = 'analysis.structuredData.schema';
    throw ApiError.validation(`${param}: not a usable JSON Schema: ${compiled.error}`, param);
  }
}

/**
 * Custom tools must be HTTPS. Plain http is accepted only for a host the operator allowlisted for local
 * development (OUTBOUND_ALLOWLIST), which is how tests reach a tool server on 127.0.0.1.
 */
function checkToolUrls(tools: AgentTool[], policy: AddressPolicy): void {
  for (const [i, t] of tools.entries()) {
    const url = new URL(t.url);
    if (url.protocol === 'https:') continue;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const allowlisted =
      policy.hostAllowed(host) || (isIP(host) > 0 && policy.addressAllowed(host) && !PUBLIC_ONLY.addressAllowed(host));
    if (!allowlisted) throw ApiError.validation(`tools.${i}.url: must be an https URL`, `tools.${i}.url`);
  }
}

/**
 * Each tool's `parameters` must compile as a JSON Schema: the model's arguments are checked against it before
 * every call, so a broken one is refused now rather than saved as a tool that always fails.
 */
function checkToolParameters(tools: AgentTool[]): void {
  for (const [i, t] of tools.entries()) {
    const compiled = compileToolSchema(t.parameters);
    if (compiled.ok) continue;
    const param = `tools.${i}.parameters`;
    throw ApiError.validation(
      `${param}: the parameters of tool "${t.name}" are not a usable JSON Schema: ${compiled.error}`,
      param,
    );
  }
}

async function checkCollection(db: Queryable, developerId: string, collectionId: string | null | undefined) {
  if (!collectionId) return;
  if (!(await collectionOwned(db, developerId, collectionId))) {
    throw new ApiError('not_found', { resource: 'collection', id: collectionId }, 'collectionId');
  }
}

/**
 * Creates an agent; a client-supplied id already used by this developer is 409. Routes fill `llmProvider`
 * with `defaultLlmProvider` first (openai here is only the last resort of callers that do not).
 */
export async function createAgent(
  db: Queryable,
  policy: AddressPolicy,
  developerId: string,
  body: CreateAgentBody,
): Promise<Agent> {
  checkTools(body.tools, policy);
  checkAnalysis(body.analysis);
  await checkCollection(db, developerId, body.collectionId);
  const id = body.id ?? newId('agent');
  const llmProvider = body.llmProvider ?? 'openai';
  const { id: _id, status: _status, ...fields } = body;
  try {
    const row = await insertAgent(db, developerId, id, newWebhookSecret(), {
      ...fields,
      llmProvider,
      llmModel: body.llmModel ?? DEFAULT_LLM_MODELS[llmProvider],
    });
    return toAgent(row, { withSecret: true });
  } catch (e) {
    if (isUniqueViolation(e)) throw new ApiError('already_exists', { resource: 'agent', id }, 'id');
    throw e;
  }
}

/** The agent, archived or not (GET shows an archived agent with status "archived"). */
export async function requireAgent(db: Queryable, developerId: string, id: string): Promise<AgentRow> {
  const row = await getAgent(db, developerId, id);
  if (!row) throw ApiError.notFound('agent', id);
  return row;
}

/** Like requireAgent, but an archived agent cannot be used (chat, speak, sync, instances): 409. */
export async function requireActiveAgent(db: Queryable, developerId: string, id: string): Promise<AgentRow> {
  const row = await requireAgent(db, developerId, id);
  if (row.status !== 'active') {
    throw new ApiError(
      'conflict',
      { detail: `Agent "${id}" is archived; restore it with PUT {"status":"active"}.` },
      'id',
    );
  }
  return row;
}

export async function listAgents(
  db: Queryable,
  developerId: string,
  limit: number,
  cursor?: string,
): Promise<Page<Agent>> {
  const after = decodeCursor(cursor);
  if (after !== null && !/^\d{1,18}$/.test(after)) throw new ApiError('invalid_cursor', {}, 'cursor');
  const rows = await listActiveAgents(db, developerId, limit + 1, after === null ? null : Number(after));
  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return {
    data: kept.map((r) => toAgent(r)),
    ...cursorField(hasMore, () => last && encodeCursor(String(last.seq))),
    hasMore,
  };
}

/**
 * Partial update: only fields present change. Changing `llmProvider` without `llmModel` resets the model to
 * the new provider's default (a model name of one vendor means nothing to another).
 */
export async function putAgent(
  db: Queryable,
  policy: AddressPolicy,
  developerId: string,
  id: string,
  body: UpdateAgentBody,
): Promise<Agent> {
  const current = await requireAgent(db, developerId, id);
  checkTools(body.tools, policy);
  checkAnalysis(body.analysis);
  await checkCollection(db, developerId, body.collectionId);
  const {
    id: _id,
    toolSigningSecret: _secret,
    version: _v,
    createdAt: _created,
    updatedAt: _updated,
    ...fields
  } = body;
  if (body.llmProvider && body.llmProvider !== current.llm_provider && body.llmModel === undefined) {
    fields.llmModel = DEFAULT_LLM_MODELS[body.llmProvider];
  }
  const row = await updateAgent(db, developerId, id, fields);
  if (!row) throw ApiError.notFound('agent', id);
  return toAgent(row);
}

/** GET /v1/agents/:id/tool-signing-secret: the secret shown at creation, on an explicit request. */
export async function revealToolSecret(db: Queryable, developerId: string, id: string): Promise<ToolSigningSecret> {
  const row = await requireAgent(db, developerId, id);
  return { agentId: row.id, toolSigningSecret: row.tool_secret };
}

/** POST /v1/agents/:id/tool-signing-secret/rotate: a new secret; tool calls are signed with it from now on. */
export async function rotateToolSecret(db: Queryable, developerId: string, id: string): Promise<ToolSigningSecret> {
  const row = await setToolSecret(db, developerId, id, newWebhookSecret());
  if (!row) throw ApiError.notFound('agent', id);
  return { agentId: row.id, toolSigningSecret: row.tool_secret };
}

/** DELETE archives: the agent keeps its conversations and sessions, leaves lists, and refuses new work. */
export async function deleteAgent(db: Queryable, developerId: string, id: string): Promise<void> {
  if (!(await archiveAgent(db, developerId, id))) throw ApiError.notFound('agent', id);
}

// ── instances ──────────────────────────────────────────────────────────────────────────────────────────────

export async function createInstance(
  db: Queryable,
  developerId: string,
  agentId: string,
  body: CreateInstanceBody,
): Promise<AgentInstance> {
  await requireActiveAgent(db, developerId, agentId);
  try {
    return toInstance(await insertInstance(db, developerId, agentId, body));
  } catch (e) {
    if (isUniqueViolation(e)) {
      throw new ApiError(
        'conflict',
        { detail: `Another instance of this agent already has phone number ${body.phoneNumber}.` },
        'phoneNumber',
      );
    }
    throw e;
  }
}

export async function listAgentInstances(
  db: Queryable,
  developerId: string,
  agentId: string,
  limit: number,
  cursor?: string,
): Promise<Page<AgentInstance>> {
  await requireAgent(db, developerId, agentId);
  const rows = await listInstances(db, developerId, agentId, limit + 1, decodeCursor(cursor));
  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { data: kept.map(toInstance), ...cursorField(hasMore, () => last && encodeCursor(last.id)), hasMore };
}

export async function getAgentInstance(
  db: Queryable,
  developerId: string,
  agentId: string,
  id: string,
): Promise<AgentInstance> {
  await requireAgent(db, developerId, agentId);
  const row = await getInstance(db, developerId, agentId, id);
  if (!row) throw ApiError.notFound('agent instance', id);
  return toInstance(row);
}

export async function deleteAgentInstance(db: Queryable, developerId: string, agentId: string, id: string) {
  await requireAgent(db, developerId, agentId);
  if (!(await deleteInstance(db, developerId, agentId, id))) throw ApiError.notFound('agent instance', id);
}
