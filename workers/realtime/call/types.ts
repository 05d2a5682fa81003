import type { AgentRow } from '../../../shared/domains/agents/db.ts';
import type { AgentRuntime } from '../../../shared/domains/agents/runtime.ts';
import type { Logger } from '../../../shared/kernel/observability/logger.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import type { SessionEngines } from '../../../shared/domains/realtime/engines.ts';
import type { TurnSettings } from '../pipeline/turn/turn-stage.ts';
import type { AudioSink } from '../pipeline/playback.ts';
import type { TraceStore } from './trace-store.ts';

/** The transport a session talks through (Twilio media stream or the direct socket). */
export interface SessionTransport extends AudioSink {
  readonly channel: 'twilio' | 'direct';
  /** Caller audio rate (8000 for Twilio). */
  readonly inRate: number;
  /** JSON events for clients that want them (direct socket); Twilio ignores them. */
  event(msg: Record<string, unknown>): void;
}

/** The call's settings: the turn stage's (endpointing, barge-in, final wait) and the call's own. */
export interface SessionSettings extends TurnSettings {
  maxSessionSeconds: number;
  vadThreshold: number;
  /** Answering-machine detection on outbound calls (REALTIME_AMD). */
  amd: boolean;
}

export interface SessionInit {
  infra: Infra;
  sessionId: string;
  developerId: string;
  agent: AgentRow;
  runtime: AgentRuntime;
  engines: SessionEngines;
  transport: SessionTransport;
  trace: TraceStore;
  settings: SessionSettings;
  log: Logger;
  /** An outbound call's task and template variables (the voicemail message's {{name}}). */
  outbound?: { taskId: string; variables: Record<string, string | number | boolean> };
}
