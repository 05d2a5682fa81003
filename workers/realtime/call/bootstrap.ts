import { getAgent, type AgentRow } from '../../../shared/domains/agents/db.ts';
import { agentAtVersion, getAgentVersion } from '../../../shared/domains/agents/versions.ts';
import { findInstanceByPhone, getInstance } from '../../../shared/domains/agents/instances-db.ts';
import { fillTemplate, templateDefaults, type ContextVars } from '../../../shared/domains/agents/prompt.ts';
import { prepareAgentRuntime } from '../../../shared/domains/agents/runtime.ts';
import { ApiError } from '../../../shared/kernel/errors/api-error.ts';
import type { Logger } from '../../../shared/kernel/observability/logger.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import { CallSession } from './call-session.ts';
import type { SessionTransport } from './types.ts';
import { resolveSessionEngines, speechFor } from '../../../shared/domains/realtime/engines.ts';
import { endpointingPolicy } from '../pipeline/turn/endpointing.ts';
import { TraceStore } from './trace-store.ts';
import type { CallControl } from '../../../shared/domains/agents/tools/call-control.ts';
import { getOutboundTask } from '../../../shared/domains/realtime/outbound-tasks.ts';

/** Spoken-style guidance added to the agent's system prompt for voice sessions. */
export const VOICE_INSTRUCTIONS = [
  'You are speaking on a live voice call: answer in short spoken sentences, without markdown, lists or emoji.',
  'Keep each reply to one to three sentences unless asked for detail.',
];

export interface OpenSessionInput {
  sessionId: string;
  developerId: string;
  agentId: string;
  instanceId?: string;
  /** Caller phone: selects the agent instance with that number when no instanceId is given. */
  callerPhone?: string;
  channel: 'twilio' | 'direct';
  transport: SessionTransport;
  headers?: Record<string, string | string[] | undefined>;
  /** A campaign recipient's variables: over the instance's context, in the prompt and the first message. */
  variables?: ContextVars | null;
  log: Logger;
  /** The outbound task this call was placed for (its variables, answering-machine detection). */
  taskId?: string;
  /** Run this configuration version of the agent (a replay); absent: the agent as it is now. */
  agentVersion?: number;
}

/** Loads the agent, picks the engines and builds a ready CallSession (not yet started). Throws ApiError. */
export async function openSession(
  infra: Infra,
  input: OpenSessionInput,
): Promise<{ session: CallSession; agent: AgentRow }> {
  const current = await getAgent(infra.db, input.developerId, input.agentId);
  if (!current || current.status !== 'active') throw ApiError.notFound('agent', input.agentId);
  const version = input.agentVersion
    ? await getAgentVersion(infra.db, input.developerId, input.agentId, input.agentVersion)
    : null;
  if (input.agentVersion && !version)
    throw ApiError.notFound('agent version', `${input.agentId}@${input.agentVersion}`);
  const agent = version ? agentAtVersion(current, version) : current;
  const inst = input.instanceId
    ? await getInstance(infra.db, input.developerId, agent.id, input.instanceId)
    : input.callerPhone
      ? await findInstanceByPhone(infra.db, input.developerId, agent.id, input.callerPhone)
      : null;
  const task = input.taskId ? await getOutboundTask(infra.db, input.taskId) : null;
  // An outbound call's variables (its task's, or a campaign recipient's) join the instance's context: the prompt,
  // the first message and the voicemail message use them.
  const variables = task?.variables ?? input.variables ?? null;
  const context = variables ? { ...inst?.context, ...variables } : (inst?.context ?? null);
  // The runtime is built before the session; its call tools reach the session once it exists.
  let session: CallSession | null = null;
  const callControl: CallControl = {
    transfer: (target, summary, signal) => session!.control.transfer(target, summary, signal),
    end: (reason, signal) => session!.control.end(reason, signal),
    takeMessage: (message, signal) => session!.control.takeMessage(message, signal),
  };
  const engines = await resolveSessionEngines(
    infra,
    speechFor(infra),
    input.developerId,
    agent,
    input.channel,
    input.headers,
  );
  const runtime = await prepareAgentRuntime(infra, {
    developerId: input.developerId,
    agent,
    conversationId: input.sessionId,
    requestId: input.sessionId,
    context,
    headers: input.headers ?? {},
    extraInstructions: VOICE_INSTRUCTIONS,
    callControl,
  });
  const c = infra.config;
  session = new CallSession({
    infra,
    sessionId: input.sessionId,
    developerId: input.developerId,
    // The first message is a template too ("Hi {{name}}, …"), filled like the prompt.
    agent: { ...agent, first_message: fillTemplate(agent.first_message, context, templateDefaults(agent.variables)) },
    runtime,
    engines,
    transport: input.transport,
    trace: new TraceStore(infra.db, input.sessionId),
    settings: {
      endpointing: endpointingPolicy(c, agent),
      bargeInMinMs: c.REALTIME_BARGE_IN_MIN_MS,
      bargeInForceMs: c.REALTIME_BARGE_IN_FORCE_MS,
      maxSessionSeconds: c.REALTIME_MAX_SESSION_SECONDS,
      vadThreshold: 0.5,
      finalWaitMs: finalWaitMs(engines),
      // After a failover the fallback's own wait: the vendor's 1.2 s cut the local recogniser's turns to a partial.
      ...(engines.sttFallback
        ? {
            finalWaitMsBy: {
              [engines.sttFallback.engine.provider]: finalWaitMs({
                stt: engines.sttFallback.engine,
                sttProvider: engines.sttFallback.engine.provider,
              }),
            },
          }
        : {}),
      amd: c.REALTIME_AMD,
    },
    log: input.log,
    // Outbound calls (a task, or a campaign attempt) wait for answering-machine detection before the greeting.
    ...(input.taskId && (task || input.variables)
      ? { outbound: { taskId: input.taskId, variables: variables ?? {} } }
      : {}),
  });
  return { session, agent };
}

/**
 * How long after the endpoint a turn waits for its final transcript before going on with the last partial. A batch
 * engine transcribes after the endpoint (pocketsphinx: ~0.5 s per second of speech). The local streaming recogniser
 * finals 250 ms after the speech, but on a CPU short of time it falls behind the audio: its final is late, never
 * lost, and going on without it would answer a partial (or nothing). A vendor's final may never come.
 */
function finalWaitMs(engines: { stt: { capabilities: { streaming: boolean } }; sttProvider: string }): number {
  if (!engines.stt.capabilities.streaming) return 8000;
  return engines.sttProvider === 'default' ? 5000 : 1200;
}
