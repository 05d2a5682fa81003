import { resolveProviderKey, type ResolvedKey } from '../../platform/keys/provider-key.ts';
import type { LlmEngine, LlmMessage } from '../../engines/llm/types.ts';
import type { Infra } from '../../platform/infra.ts';
import type { AgentRow } from './db.ts';
import { buildMessages, buildSystemPrompt, templateDefaults, type ContextVars, type HistoryTurn } from './prompt.ts';
import { callControlTools, type CallControl } from './tools/call-control.ts';
import { httpTool } from './tools/http-tool.ts';
import { collectionSearch, knowledgeTool } from './tools/knowledge.ts';
import type { AgentToolHandler, TurnOptions } from './turn-runner.ts';

export interface AgentRuntimeInput {
  developerId: string;
  agent: AgentRow;
  /** Id the custom tools see (`data.conversationId`): a chat conversation or a realtime session. */
  conversationId: string;
  /** The selected instance's context variables. */
  context?: ContextVars | null;
  /** Request headers, for `X-Provider-Key-<Vendor>`; {} where there is no request. */
  headers?: Record<string, string | string[] | undefined>;
  /** Ties metering and logs to the request or session. */
  requestId: string;
  /** Extra system-prompt lines (e.g. "answer in short spoken sentences" for voice). */
  extraInstructions?: string[];
  /** A live call's controls: with them the agent's `callTools` (transfer_call, end_call) are offered. */
  callControl?: CallControl;
}

/** Everything needed to run turns for one agent: engine, key, tools and system prompt. */
export interface AgentRuntime {
  engine: LlmEngine;
  provider: string;
  model: string;
  key: ResolvedKey;
  tools: AgentToolHandler[];
  systemPrompt: string;
  /** TurnOptions for a new user message over the given history; add `maxSteps` and `signal`. */
  turn(history: HistoryTurn[] | LlmMessage[], userMessage: string): Omit<TurnOptions, 'maxSteps' | 'signal'>;
}

/**
 * Prepares an agent for turns. Shared by the chat endpoint and the realtime voice pipeline, so both speak
 * with the same prompt, tools and key resolution. Throws 400 `provider_unavailable` when no key is configured.
 */
export async function prepareAgentRuntime(infra: Infra, input: AgentRuntimeInput): Promise<AgentRuntime> {
  const { agent } = input;
  const provider = agent.llm_provider;
  const engine = infra.engines.llm.get(provider);
  // An engine that needs no key (the local reply engine, a knowledge lookup and not a language model) runs on the
  // platform and is free: its replies are recorded as `llm` items with 0 credits, like the local STT and TTS of a
  // direct session (docs/billing.md, "The local reply engine"). Its collection search is part of the reply (the
  // knowledge tool does not meter it apart), so the lookup is free as a whole.
  const key = (await resolveProviderKey(infra, { engine, developerId: input.developerId, headers: input.headers })) ?? {
    key: '',
    source: 'platform',
    billable: false,
  };
  const tools: AgentToolHandler[] = [];
  const search = agent.collection_id
    ? collectionSearch(infra, input.developerId, agent.collection_id, input.requestId, input.headers)
    : undefined;
  if (agent.collection_id && search)
    tools.push(knowledgeTool(infra, input.developerId, agent.collection_id, input.requestId, input.headers, search));
  for (const t of agent.tools) {
    tools.push(
      httpTool(t, {
        policy: infra.addressPolicy,
        secret: agent.tool_secret,
        agentId: agent.id,
        conversationId: input.conversationId,
      }),
    );
  }
  tools.push(...callControlTools(agent.call_tools, input.callControl));
  const systemPrompt = buildSystemPrompt({
    systemPrompt: agent.system_prompt,
    language: agent.language,
    context: input.context,
    defaults: templateDefaults(agent.variables),
    hasKnowledge: Boolean(agent.collection_id),
    extra: input.extraInstructions,
  });
  const model = agent.llm_model || engine.defaultModel;
  return {
    engine,
    provider,
    model,
    key,
    tools,
    systemPrompt,
    turn(history, userMessage) {
      const messages =
        history.length && 'role' in history[0]!
          ? [
              { role: 'system' as const, content: systemPrompt },
              ...(history as LlmMessage[]),
              { role: 'user' as const, content: userMessage },
            ]
          : buildMessages(systemPrompt, history as HistoryTurn[], userMessage);
      return {
        engine,
        model,
        messages,
        tools,
        temperature: agent.temperature,
        maxTokens: agent.max_tokens,
        apiKey: key.key,
        // Injected rather than imported by the engine: engines never reach into the agents or rag domains.
        lookup: { search, greeting: agent.first_message },
      };
    },
  };
}
