import type { AgentTool } from '../../../contracts/agents.ts';
import { newId } from '../../../kernel/ids.ts';
import type { AddressPolicy } from '../../../kernel/net/address-policy.ts';
import { safeFetch } from '../../../kernel/net/safe-fetch.ts';
import { webhookHeaders } from '../../webhooks/standard-webhooks.ts';
import type { AgentToolHandler } from '../turn-runner.ts';

/** Largest tool response read (the model gets at most MAX_TOOL_RESULT_CHARS of it). */
const MAX_RESPONSE_BYTES = 256 * 1024;

export interface HttpToolContext {
  policy: AddressPolicy;
  /** The agent's Standard Webhooks secret (`whsec_…`). */
  secret: string;
  agentId: string;
  conversationId: string;
}

/**
 * A custom tool declared on an agent: the call is POSTed to the tool's URL as a Standard Webhooks message
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with body
 * `{type: "agent.tool_call", timestamp, data: {agentId, conversationId, toolCallId, name, arguments}}`.
 * A 2xx response body (JSON or text) is the result; a non-2xx status, an unreachable or private address, or
 * the tool's timeout is a tool error the model sees. The URL is fetched SSRF-safely.
 */
export function httpTool(tool: AgentTool, ctx: HttpToolContext): AgentToolHandler {
  return {
    definition: { name: tool.name, description: tool.description, parameters: tool.parameters },
    async execute(args, { toolCallId, signal }) {
      const body = JSON.stringify({
        type: 'agent.tool_call',
        timestamp: new Date().toISOString(),
        data: {
          agentId: ctx.agentId,
          conversationId: ctx.conversationId,
          toolCallId,
          name: tool.name,
          arguments: args,
        },
      });
      const timeout = AbortSignal.timeout(tool.timeoutMs);
      const combined = AbortSignal.any([signal, timeout]);
      try {
        const res = await safeFetch(tool.url, {
          policy: ctx.policy,
          maxBytes: MAX_RESPONSE_BYTES,
          timeoutMs: tool.timeoutMs,
          signal: combined,
          method: 'POST',
          headers: webhookHeaders(ctx.secret, newId('message'), body),
          body,
          maxRedirects: 0,
          param: 'tools.url',
        });
        const chunks: Buffer[] = [];
        for await (const c of res.body) chunks.push(c as Buffer);
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.status < 200 || res.status >= 300) throw new Error(`tool endpoint answered HTTP ${res.status}`);
        return text;
      } catch (e) {
        if (timeout.aborted && !signal.aborted) throw new Error(`tool timed out after ${tool.timeoutMs} ms`);
        if (signal.aborted) throw e;
        throw new Error((e as Error).message || 'tool call failed', { cause: e });
      }
    },
  };
}
