import type { ToolCallRecord } from '../../contracts/agents.ts';
import type { Queryable } from '../../kernel/db/pool.ts';
import { isUniqueViolation } from '../../kernel/db/pool.ts';
import { newId } from '../../kernel/ids.ts';
import type { HistoryTurn } from './prompt.ts';

export interface ConversationRow {
  id: string;
  developer_id: string;
  agent_id: string;
  instance_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const CONVERSATION_COLUMNS = 'id, developer_id, agent_id, instance_id, created_at, updated_at';

export async function getConversation(
  db: Queryable,
  developerId: string,
  agentId: string,
  id: string,
): Promise<ConversationRow | null> {
  const { rows } = await db.query<ConversationRow>(
    `select ${CONVERSATION_COLUMNS} from agent_conversations where developer_id = $1 and agent_id = $2 and id = $3`,
    [developerId, agentId, id],
  );
  return rows[0] ?? null;
}

/** Starts a conversation; `id` is given when the turn already needed it (tool calls carry it) before the insert. */
export async function insertConversation(
  db: Queryable,
  developerId: string,
  agentId: string,
  instanceId: string | null,
  id = newId('conversation'),
): Promise<ConversationRow> {
  const { rows } = await db.query<ConversationRow>(
    `insert into agent_conversations (id, developer_id, agent_id, instance_id) values ($1, $2, $3, $4)
     returning ${CONVERSATION_COLUMNS}`,
    [id, developerId, agentId, instanceId],
  );
  return rows[0]!;
}

/**
 * Locks the developer's conversation row for the rest of the caller's transaction, so turns appended to one
 * conversation inside transactions go one at a time (see `appendTurn`).
 */
export async function lockConversation(db: Queryable, developerId: string, id: string): Promise<void> {
  await db.query('select 1 from agent_conversations where developer_id = $1 and id = $2 for update', [developerId, id]);
}

/** The last `limit` turns, oldest first. */
export async function recentTurns(db: Queryable, conversationId: string, limit: number): Promise<HistoryTurn[]> {
  const { rows } = await db.query<{ user_message: string; reply: string }>(
    `select user_message, reply from (
       select turn_index, user_message, reply from agent_turns where conversation_id = $1
        order by turn_index desc limit $2) t order by turn_index`,
    [conversationId, limit],
  );
  return rows.map((r) => ({ userMessage: r.user_message, reply: r.reply }));
}

export interface NewTurn {
  userMessage: string;
  reply: string;
  toolCalls: ToolCallRecord[];
  inputTokens: number;
  outputTokens: number;
  provider: string;
  model: string;
}

/**
 * Appends a turn with the next index (0 for the first). On the pool, two turns racing on one conversation both
 * land (the loser of the unique (conversation, index) retries with the next number); inside a transaction, lock
 * the conversation row first (`lockConversation`), since a failed statement aborts the transaction.
 */
export async function appendTurn(db: Queryable, conversationId: string, t: NewTurn): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      const { rows } = await db.query<{ turn_index: number }>(
        `insert into agent_turns (conversation_id, turn_index, user_message, reply, tool_calls, input_tokens,
                                  output_tokens, provider, model)
         select $1, coalesce(max(turn_index) + 1, 0), $2, $3, $4, $5, $6, $7, $8
           from agent_turns where conversation_id = $1
         returning turn_index`,
        [
          conversationId,
          t.userMessage,
          t.reply,
          JSON.stringify(t.toolCalls),
          t.inputTokens,
          t.outputTokens,
          t.provider,
          t.model,
        ],
      );
      await db.query('update agent_conversations set updated_at = now() where id = $1', [conversationId]);
      return rows[0]!.turn_index;
    } catch (e) {
      if (attempt < 5 && isUniqueViolation(e)) continue;
      throw e;
    }
  }
}

export interface ConversationListRow extends ConversationRow {
  turn_count: number;
}

/** Conversations of one agent, newest first (ids are time-sortable). */
export async function listConversations(
  db: Queryable,
  developerId: string,
  agentId: string,
  limit: number,
  beforeId: string | null,
): Promise<ConversationListRow[]> {
  const { rows } = await db.query<ConversationListRow>(
    `select c.id, c.developer_id, c.agent_id, c.instance_id, c.created_at, c.updated_at,
            (select count(*)::int from agent_turns t where t.conversation_id = c.id) as turn_count
       from agent_conversations c
      where c.developer_id = $1 and c.agent_id = $2 and ($3::text is null or c.id < $3)
      order by c.id desc limit $4`,
    [developerId, agentId, beforeId, limit],
  );
  return rows;
}

export interface TurnRow {
  turn_index: number;
  user_message: string;
  reply: string;
  tool_calls: ToolCallRecord[];
  input_tokens: number;
  output_tokens: number;
  created_at: Date;
}

/** Every turn of a conversation, in order. */
export async function allTurns(db: Queryable, conversationId: string): Promise<TurnRow[]> {
  const { rows } = await db.query<TurnRow>(
    `select turn_index, user_message, reply, tool_calls, input_tokens, output_tokens, created_at
       from agent_turns where conversation_id = $1 order by turn_index`,
    [conversationId],
  );
  return rows;
}
