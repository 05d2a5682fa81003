import { ifSet } from '../../contracts/absent.ts';
import type { AudioSettings } from '../../contracts/turn-seams.ts';
import type { AnalysisSettings } from '../../contracts/call-analysis.ts';
import type {
  Agent,
  AgentTool,
  AgentVariables,
  CallTools,
  StyleProfile,
  TurnTaking,
  Voicemail,
} from '../../contracts/agents.ts';
import type { Queryable } from '../../kernel/db/pool.ts';

/** An agents row as Postgres returns it. */
export interface AgentRow {
  developer_id: string;
  id: string;
  seq: number;
  name: string;
  description: string;
  system_prompt: string;
  first_message: string;
  voice_id: string;
  tts_provider: string;
  tts_model: string | null;
  llm_provider: string;
  llm_model: string;
  collection_id: string | null;
  style_profile: StyleProfile | null;
  turn_taking: TurnTaking | null;
  /** Caller-audio settings (input processors); null = the audio as it arrives. */
  audio: AudioSettings | null;
  voicemail: Voicemail | null;
  /** Defaults of template variables (`{{name}}`) the call does not give; null: none. */
  variables: AgentVariables | null;
  call_tools: CallTools | null;
  /** Post-call analysis settings; null: none. */
  analysis: AnalysisSettings | null;
  language: string;
  temperature: number;
  max_tokens: number;
  /** Per-call defaults (null: none beyond the platform's); a session-create body may override them. */
  max_duration_seconds: number | null;
  max_credits: number | null;
  /** Said when a cap or the balance ends a call (null: the platform's default goodbye). */
  goodbye_message: string | null;
  status: 'active' | 'archived';
  metadata: Record<string, unknown>;
  tools: AgentTool[];
  tool_secret: string;
  /** The current configuration's version (agent_versions; moved by the database on every change). */
  version: number;
  created_at: Date;
  updated_at: Date;
  archived_at: Date | null;
}

/** Column ↔ API field, in one table so inserts, updates and the wire shape agree. */
export const AGENT_COLUMNS = {
  name: 'name',
  description: 'description',
  systemPrompt: 'system_prompt',
  firstMessage: 'first_message',
  voiceId: 'voice_id',
  ttsProvider: 'tts_provider',
  ttsModel: 'tts_model',
  llmProvider: 'llm_provider',
  llmModel: 'llm_model',
  collectionId: 'collection_id',
  styleProfile: 'style_profile',
  turnTaking: 'turn_taking',
  audio: 'audio',
  voicemail: 'voicemail',
  variables: 'variables',
  callTools: 'call_tools',
  analysis: 'analysis',
  language: 'language',
  temperature: 'temperature',
  maxTokens: 'max_tokens',
  maxDurationSeconds: 'max_duration_seconds',
  maxCredits: 'max_credits',
  goodbyeMessage: 'goodbye_message',
  status: 'status',
  metadata: 'metadata',
  tools: 'tools',
} as const;
export type AgentField = keyof typeof AGENT_COLUMNS;
const JSON_FIELDS = new Set<AgentField>([
  'styleProfile',
  'turnTaking',
  'audio',
  'voicemail',
  'variables',
  'callTools',
  'analysis',
  'metadata',
  'tools',
]);

/** The API form of an agent. The tool-signing secret is shown only where asked for: creation, reveal, rotate. */
export function toAgent(r: AgentRow, opts: { withSecret?: boolean } = {}): Agent {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    systemPrompt: r.system_prompt,
    firstMessage: r.first_message,
    voiceId: r.voice_id,
    ttsProvider: r.tts_provider,
    ttsModel: r.tts_model,
    llmProvider: r.llm_provider,
    llmModel: r.llm_model,
    collectionId: r.collection_id,
    styleProfile: r.style_profile,
    ...ifSet('turnTaking', r.turn_taking),
    ...ifSet('audio', r.audio),
    ...ifSet('voicemail', r.voicemail),
    ...ifSet('variables', r.variables),
    ...ifSet('callTools', r.call_tools),
    ...ifSet('analysis', r.analysis),
    language: r.language,
    temperature: r.temperature,
    maxTokens: r.max_tokens,
    ...ifSet('maxDurationSeconds', r.max_duration_seconds),
    ...ifSet('maxCredits', r.max_credits),
    ...ifSet('goodbyeMessage', r.goodbye_message),
    status: r.status,
    metadata: r.metadata,
    tools: r.tools,
    ...(opts.withSecret ? { toolSigningSecret: r.tool_secret } : {}),
    version: r.version,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

function param(field: AgentField, v: unknown): unknown {
  return JSON_FIELDS.has(field) && v !== null ? JSON.stringify(v) : v;
}

/**
 * One agent of one developer, archived or not (callers decide what archived means for them: the realtime
 * session refuses it, GET shows it). Another developer's id reads as missing.
 */
export async function getAgent(db: Queryable, developerId: string, id: string): Promise<AgentRow | null> {
  const { rows } = await db.query<AgentRow>('select * from agents where developer_id = $1 and id = $2', [
    developerId,
    id,
  ]);
  return rows[0] ?? null;
}

export async function insertAgent(
  db: Queryable,
  developerId: string,
  id: string,
  toolSecret: string,
  fields: Partial<Record<AgentField, unknown>> & { name: string; llmModel: string },
): Promise<AgentRow> {
  const cols = ['developer_id', 'id', 'tool_secret'];
  const vals: unknown[] = [developerId, id, toolSecret];
  for (const [k, v] of Object.entries(fields) as [AgentField, unknown][]) {
    if (v === undefined || !(k in AGENT_COLUMNS)) continue;
    cols.push(AGENT_COLUMNS[k]);
    vals.push(param(k, v));
  }
  const { rows } = await db.query<AgentRow>(
    `insert into agents (${cols.join(', ')}) values (${vals.map((_, i) => `$${i + 1}`).join(', ')}) returning *`,
    vals,
  );
  return rows[0]!;
}

/** Replaces an agent's tool-signing secret; null when no such agent. */
export async function setToolSecret(
  db: Queryable,
  developerId: string,
  id: string,
  secret: string,
): Promise<AgentRow | null> {
  const { rows } = await db.query<AgentRow>(
    'update agents set tool_secret = $3, updated_at = now() where developer_id = $1 and id = $2 returning *',
    [developerId, id, secret],
  );
  return rows[0] ?? null;
}

/** Sets the given fields (undefined = unchanged) and bumps updated_at; null when no such agent. */
export async function updateAgent(
  db: Queryable,
  developerId: string,
  id: string,
  fields: Partial<Record<AgentField, unknown>>,
): Promise<AgentRow | null> {
  const sets = ['updated_at = now()'];
  const vals: unknown[] = [developerId, id];
  for (const [k, v] of Object.entries(fields) as [AgentField, unknown][]) {
    if (v === undefined || !(k in AGENT_COLUMNS)) continue;
    vals.push(param(k, v));
    sets.push(`${AGENT_COLUMNS[k]} = $${vals.length}`);
  }
  if (fields.status === 'archived') sets.push('archived_at = coalesce(archived_at, now())');
  if (fields.status === 'active') sets.push('archived_at = null');
  const { rows } = await db.query<AgentRow>(
    `update agents set ${sets.join(', ')} where developer_id = $1 and id = $2 returning *`,
    vals,
  );
  return rows[0] ?? null;
}

/** Active agents, newest first; `afterSeq` is the last row of the previous page. */
/** The developer who owns an agent, for operator tooling that is given only the agent id (agent tests' CLI). */
export async function agentOwner(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ developer_id: string }>('select developer_id from agents where id = $1', [id]);
  return rows[0]?.developer_id ?? null;
}

export async function listActiveAgents(
  db: Queryable,
  developerId: string,
  limit: number,
  afterSeq: number | null,
): Promise<AgentRow[]> {
  const { rows } = await db.query<AgentRow>(
    `select * from agents where developer_id = $1 and status = 'active' and ($2::bigint is null or seq < $2)
      order by seq desc limit $3`,
    [developerId, afterSeq, limit],
  );
  return rows;
}

export async function archiveAgent(db: Queryable, developerId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `update agents set status = 'archived', archived_at = coalesce(archived_at, now()), updated_at = now()
      where developer_id = $1 and id = $2`,
    [developerId, id],
  );
  return (rowCount ?? 0) > 0;
}

// ── external sync ──────────────────────────────────────────────────────────────────────────────────────────

export async function getSyncedId(
  db: Queryable,
  developerId: string,
  agentId: string,
  provider: string,
): Promise<string | null> {
  const { rows } = await db.query<{ external_id: string }>(
    'select external_id from agent_syncs where developer_id = $1 and agent_id = $2 and provider = $3',
    [developerId, agentId, provider],
  );
  return rows[0]?.external_id ?? null;
}

export async function recordSync(
  db: Queryable,
  developerId: string,
  agentId: string,
  provider: string,
  externalId: string,
): Promise<void> {
  await db.query(
    `insert into agent_syncs (developer_id, agent_id, provider, external_id) values ($1, $2, $3, $4)
     on conflict (developer_id, agent_id, provider) do update set external_id = excluded.external_id, synced_at = now()`,
    [developerId, agentId, provider, externalId],
  );
}
