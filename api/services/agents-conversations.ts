import { toToolCallView } from '../../shared/domains/agents/tool-call-view.ts';
import { ifSet } from '../../shared/contracts/absent.ts';
import { allTurns, getConversation, listConversations } from '../../shared/domains/agents/conversations-db.ts';
import type { Conversation, ConversationSummary } from '../../shared/contracts/agents.ts';
import type { Queryable } from '../../shared/kernel/db/pool.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { decodeCursor, toPage, type Page } from '../../shared/kernel/pagination.ts';
import { requireAgent } from './agents.ts';

/** An agent's chat conversations, newest first; archived agents included (their history stays readable). */
export async function listAgentConversations(
  db: Queryable,
  developerId: string,
  agentId: string,
  limit: number,
  cursor?: string,
): Promise<Page<ConversationSummary>> {
  await requireAgent(db, developerId, agentId);
  const rows = await listConversations(db, developerId, agentId, limit + 1, decodeCursor(cursor));
  return toPage(rows, limit, (r) => ({
    id: r.id,
    agentId: r.agent_id,
    ...ifSet('instanceId', r.instance_id),
    turnCount: r.turn_count,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  }));
}

/** One conversation with every turn. */
export async function getAgentConversation(
  db: Queryable,
  developerId: string,
  agentId: string,
  conversationId: string,
): Promise<Conversation> {
  await requireAgent(db, developerId, agentId);
  const conv = await getConversation(db, developerId, agentId, conversationId);
  if (!conv) throw ApiError.notFound('conversation', conversationId);
  const turns = await allTurns(db, conv.id);
  return {
    id: conv.id,
    agentId: conv.agent_id,
    ...ifSet('instanceId', conv.instance_id),
    turnCount: turns.length,
    createdAt: conv.created_at.toISOString(),
    updatedAt: conv.updated_at.toISOString(),
    turns: turns.map((t) => ({
      turnIndex: t.turn_index,
      message: t.user_message,
      reply: t.reply,
      toolCalls: t.tool_calls.map(toToolCallView),
      usage: { inputTokens: t.input_tokens, outputTokens: t.output_tokens },
      createdAt: t.created_at.toISOString(),
    })),
  };
}
