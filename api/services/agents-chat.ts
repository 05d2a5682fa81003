import type { FastifyRequest } from 'fastify';
import { getConversation, appendTurn, recentTurns } from '../../shared/agents/conversations-db.ts';
import { engineToApiError } from '../../shared/agents/engine-errors.ts';
import { findInstanceByPhone, getInstance, type InstanceRow } from '../../shared/agents/instances-db.ts';
import { meterOf } from '../../shared/agents/metering.ts';
import { prepareAgentRuntime } from '../../shared/agents/runtime.ts';
import { runTurnToEnd } from '../../shared/agents/turn-runner.ts';
import type { ChatBody, ChatResponse } from '../../shared/contracts/agents.ts';
import { withTransaction } from '../../shared/db/pool.ts';
import { ApiError } from '../../shared/errors/api-error.ts';
import { newId } from '../../shared/ids.ts';
import type { Infra } from '../../shared/runtime/infra.ts';
import { requireActiveAgent } from './agents.ts';

/**
 * One chat turn: loads the agent, the conversation (or starts one) and the instance context, runs the tool
 * loop, then stores the turn. Metered in `llm` credits by tokens (nothing charged when the caller's own key
 * served it). A turn that fails upstream stores nothing and refunds the hold.
 */
export async function chatWithAgent(
  infra: Infra,
  req: FastifyRequest,
  agentId: string,
  body: ChatBody,
): Promise<ChatResponse> {
  const developerId = req.auth.developerId;
  const agent = await requireActiveAgent(infra.db, developerId, agentId);

  const existing = body.conversationId
    ? await getConversation(infra.db, developerId, agentId, body.conversationId)
    : null;
  if (body.conversationId && !existing) {
    throw new ApiError('not_found', { resource: 'conversation', id: body.conversationId }, 'conversationId');
  }
  const instance = await selectInstance(infra, developerId, agentId, body, existing?.instance_id ?? null);
  const conversationId = existing?.id ?? newId('conversation');
  const history = existing ? await recentTurns(infra.db, existing.id, infra.config.AGENT_HISTORY_TURNS) : [];

  const runtime = await prepareAgentRuntime(infra, {
    developerId,
    agent,
    conversationId,
    context: instance?.context ?? null,
    headers: req.headers,
    requestId: req.id,
  });
  req.providerUsed = runtime.provider;
  req.usageBypassed = !runtime.key.billable;

  const turn = runtime.turn(history, body.message);
  const promptChars = turn.messages.reduce((n, m) => n + m.content.length, 0);
  const meter = meterOf(infra);
  const reservation = await meter?.reserve({
    developerId,
    category: 'llm',
    units: Math.ceil(promptChars / 4) + agent.max_tokens,
    unit: 'tokens',
    provider: runtime.provider,
    billable: runtime.key.billable,
    requestId: req.id,
    operation: 'chat',
  });

  // A client that hangs up cancels the LLM stream and running tools.
  const abort = new AbortController();
  const onClose = () => abort.abort();
  const deadline = AbortSignal.timeout(infra.config.AGENT_TURN_TIMEOUT_MS);
  req.raw.socket?.once('close', onClose);
  let result;
  try {
    result = await runTurnToEnd({
      ...turn,
      maxSteps: body.maxSteps,
      signal: AbortSignal.any([abort.signal, deadline]),
    });
  } catch (e) {
    await reservation?.refund().catch(() => {});
    if (deadline.aborted) throw new ApiError('upstream_timeout', { provider: runtime.provider });
    throw engineToApiError(e, runtime.provider);
  } finally {
    req.raw.socket?.off('close', onClose);
  }

  const turnIndex = await withTransaction(infra.db, async (tx) => {
    if (!existing) {
      await tx.query(
        'insert into agent_conversations (id, developer_id, agent_id, instance_id) values ($1, $2, $3, $4)',
        [conversationId, developerId, agentId, instance?.id ?? null],
      );
    }
    return appendTurn(tx, conversationId, {
      userMessage: body.message,
      reply: result.reply,
      toolCalls: result.toolCalls,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      provider: runtime.provider,
      model: runtime.model,
    });
  });
  await reservation?.commit(result.usage.inputTokens + result.usage.outputTokens);
  return { reply: result.reply, conversationId, turnIndex, toolCalls: result.toolCalls, usage: result.usage };
}

/**
 * `instanceId` selects an instance (404 if it is not this agent's); otherwise `callerPhone` matches one by
 * phone number (no match = no personal context); otherwise a continued conversation keeps its instance.
 */
async function selectInstance(
  infra: Infra,
  developerId: string,
  agentId: string,
  body: ChatBody,
  conversationInstance: string | null,
): Promise<InstanceRow | null> {
  if (body.instanceId) {
    const row = await getInstance(infra.db, developerId, agentId, body.instanceId);
    if (!row) throw new ApiError('not_found', { resource: 'agent instance', id: body.instanceId }, 'instanceId');
    return row;
  }
  if (body.callerPhone) {
    const phone = body.callerPhone.replace(/[\s()-]/g, '');
    return findInstanceByPhone(infra.db, developerId, agentId, phone);
  }
  if (conversationInstance) return getInstance(infra.db, developerId, agentId, conversationInstance);
  return null;
}
