import { toToolCallView } from '../../shared/domains/agents/tool-call-view.ts';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import {
  appendTurn,
  getConversation,
  insertConversation,
  lockConversation,
  recentTurns,
} from '../../shared/domains/agents/conversations-db.ts';
import { engineToApiError } from '../../shared/kernel/errors/engine-error.ts';
import { findInstanceByPhone, getInstance, type InstanceRow } from '../../shared/domains/agents/instances-db.ts';
import { meterOf } from '../../shared/domains/agents/metering.ts';
import { prepareAgentRuntime, type AgentRuntime } from '../../shared/domains/agents/runtime.ts';
import { runTurn, type TurnEvent, type TurnOptions, type TurnResult } from '../../shared/domains/agents/turn-runner.ts';
import type { Reservation } from '../../shared/platform/metering/types.ts';
import type { ChatBody, ChatResponse } from '../../shared/contracts/agents.ts';
import { releaseIdempotencyKey } from '../../shared/kernel/db/idempotency.ts';
import { withTransaction } from '../../shared/kernel/db/pool.ts';
import { ApiError, isApiError } from '../../shared/kernel/errors/api-error.ts';
import { newId } from '../../shared/kernel/ids.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { requireActiveAgent } from './agents.ts';

/** A turn that is ready to run: everything validated, the key resolved, the credits held. */
interface PreparedTurn {
  infra: Infra;
  req: FastifyRequest;
  body: ChatBody;
  agentId: string;
  conversationId: string;
  isNew: boolean;
  instance: InstanceRow | null;
  runtime: AgentRuntime;
  options: TurnOptions;
  reservation: Reservation | undefined;
  deadline: AbortSignal;
  cleanup(): void;
}

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
  const turn = await prepareTurn(infra, req, agentId, body);
  try {
    let result: TurnResult | null = null;
    for await (const ev of runTurn(turn.options)) if (ev.type === 'done') result = ev.result;
    return await finishTurn(turn, result!);
  } catch (e) {
    throw await failTurn(turn, e);
  } finally {
    turn.cleanup();
  }
}

/**
 * `stream: true` (extension): the same turn as Server-Sent Events — `delta` {text}, `tool_call` {id, name,
 * arguments}, `tool_result` (a toolCalls item), then `done` with the regular response body, or `error` with the
 * error envelope. Validation, 404s and key problems are still plain JSON errors (they happen before the stream
 * opens). Streamed responses are not replayed for an Idempotency-Key.
 */
export async function chatStream(
  infra: Infra,
  req: FastifyRequest,
  agentId: string,
  body: ChatBody,
): Promise<Readable> {
  const turn = await prepareTurn(infra, req, agentId, body);
  if (req.idempotency) {
    await releaseIdempotencyKey(infra.db, req.idempotency.developerId, req.idempotency.key);
    req.idempotency = null;
  }
  const out = new PassThrough();
  const send = (event: string, data: unknown) => out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  void (async () => {
    try {
      let result: TurnResult | null = null;
      for await (const ev of runTurn(turn.options)) {
        if (ev.type === 'done') result = ev.result;
        else sendEvent(send, ev);
      }
      send('done', await finishTurn(turn, result!));
    } catch (e) {
      const err = await failTurn(turn, e);
      const apiErr = isApiError(err) ? err : new ApiError('internal_error');
      if (!isApiError(err)) req.log.error({ err }, 'chat stream failed');
      send('error', {
        error: {
          type: apiErr.type,
          code: apiErr.code,
          message: apiErr.message,
          param: apiErr.param,
          requestId: req.id,
        },
      });
    } finally {
      turn.cleanup();
      out.end();
    }
  })();
  return out;
}

function sendEvent(send: (event: string, data: unknown) => void, ev: Exclude<TurnEvent, { type: 'done' }>): void {
  if (ev.type === 'text') send('delta', { text: ev.delta });
  else if (ev.type === 'tool_call') send('tool_call', { id: ev.id, name: ev.name, arguments: ev.arguments });
  else send('tool_result', toToolCallView(ev.call));
}

async function prepareTurn(infra: Infra, req: FastifyRequest, agentId: string, body: ChatBody): Promise<PreparedTurn> {
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

  const base = runtime.turn(history, body.message);
  const promptChars = base.messages.reduce((n, m) => n + m.content.length, 0);
  const reservation = await meterOf(infra)?.reserve({
    developerId,
    category: 'llm',
    units: Math.ceil(promptChars / 4) + agent.max_tokens,
    unit: 'tokens',
    provider: runtime.provider,
    billable: runtime.key.billable,
    requestId: req.id,
    operation: 'chat',
  });

  // A client that hangs up cancels the LLM stream and running tools; so does the turn deadline.
  const abort = new AbortController();
  const onClose = () => abort.abort();
  req.raw.socket?.once('close', onClose);
  const deadline = AbortSignal.timeout(infra.config.AGENT_TURN_TIMEOUT_MS);
  return {
    infra,
    req,
    body,
    agentId,
    conversationId,
    isNew: !existing,
    instance,
    runtime,
    reservation,
    deadline,
    options: { ...base, maxSteps: body.maxSteps, signal: AbortSignal.any([abort.signal, deadline]) },
    cleanup: () => req.raw.socket?.off('close', onClose),
  };
}

/** Stores the turn (and a new conversation) in one transaction and settles the credits. */
async function finishTurn(t: PreparedTurn, result: TurnResult): Promise<ChatResponse> {
  const { infra, req, conversationId } = t;
  const developerId = req.auth.developerId;
  const turnIndex = await withTransaction(infra.db, async (tx) => {
    // Turns of one conversation append one at a time: the row lock orders concurrent turns.
    if (t.isNew) await insertConversation(tx, developerId, t.agentId, t.instance?.id ?? null, conversationId);
    else await lockConversation(tx, developerId, conversationId);
    return appendTurn(tx, conversationId, {
      userMessage: t.body.message,
      reply: result.reply,
      toolCalls: result.toolCalls,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      provider: t.runtime.provider,
      model: t.runtime.model,
    });
  });
  await t.reservation?.commit(result.usage.inputTokens + result.usage.outputTokens);
  return {
    reply: result.reply,
    conversationId,
    turnIndex,
    toolCalls: result.toolCalls.map(toToolCallView),
    usage: result.usage,
  };
}

/** Refunds the hold and turns the failure into the API error to report. */
async function failTurn(t: PreparedTurn, e: unknown): Promise<unknown> {
  await t.reservation?.refund();
  if (t.deadline.aborted) return new ApiError('upstream_timeout', { provider: t.runtime.provider });
  return engineToApiError(e, t.runtime.provider);
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
