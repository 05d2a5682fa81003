import { z } from 'zod';
import { CallAnalysis, TakenMessage } from './call-analysis.ts';
import { SESSION_END_REASONS } from './end-reasons.ts';

/** E.164-ish phone number or a Twilio client/SIP address, as Twilio passes them. */
const Phone = z.string().trim().min(1).max(200);

/** Per-call caps over the agent's defaults (docs/billing.md, "Spending caps"). */
const CallLimitFields = {
  maxDurationSeconds: z
    .number()
    .int()
    .min(10)
    .max(24 * 3600)
    .optional()
    .describe("This call's duration cap in seconds (over the agent's maxDurationSeconds)"),
  maxCredits: z
    .number()
    .int()
    .min(1)
    .max(1e12)
    .optional()
    .describe("This call's credit cap (over the agent's maxCredits)"),
};

/** A session may run a stored configuration version of its agent (agent versions), on either transport. */
const AgentVersionField = z
  .number()
  .int()
  .min(1)
  .max(2_147_483_647)
  .optional()
  .describe('Extension: run this configuration version of the agent (default: the agent as it is now)');

/**
 * A call's template variables (`{{name}}` in the agent's prompt, first message and voicemail message), over the
 * agent's declared defaults. They travel inside the session token, hence the size bound.
 */
export const SessionVariables = z
  .record(
    z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'variable names are 1-64 letters, digits, "_", "-", "."'),
    z.union([z.string().max(500), z.number(), z.boolean()]),
  )
  .refine((v) => JSON.stringify(v).length <= 1500, 'variables take at most 1500 characters as JSON')
  .describe('Template variables of this call: {{name}} in the prompt and messages');

/** Where this call's events go (Standard Webhooks): `call.analyzed` after the call (extension, issue #33). */
const SessionWebhookUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .optional()
  .describe(
    "Receives this call's call.analyzed event (Standard Webhooks), when the agent has analysis or took a message",
  );

export const CreateTwilioSessionBody = z.object({
  agentId: z.string().min(1).max(60),
  from: Phone,
  to: Phone,
  instanceId: z.string().min(1).max(100).optional(),
  agentVersion: AgentVersionField,
  variables: SessionVariables.optional(),
  webhookUrl: SessionWebhookUrl,
  ...CallLimitFields,
});
export type CreateTwilioSessionBody = z.infer<typeof CreateTwilioSessionBody>;

/** Session metadata beside the TwiML (the contract leaves the fields open; these are documented in docs/realtime.md). */
export const TwilioSession = z.object({
  sessionId: z.string(),
  agentId: z.string(),
  /** TwiML: <Response><Connect><Stream url="wss://…/v1/sessions/twilio/stream"><Parameter name="token" …/></Stream></Connect></Response> */
  twiml: z.string(),
  streamUrl: z.string(),
  /** The stream must start before this time (the token's expiry). */
  expiresAt: z.string(),
  /** false when the realtime fleet was at capacity: `twiml` then refuses the call (busy, or a short message). */
  admitted: z.boolean().optional(),
  /**
   * Why `admitted` is false: the fleet was at capacity, or money cannot fund the call's first minute (the balance,
   * or a daily spending cap). The caller hears the operator's message either way; absent when admitted.
   */
  refusal: z.enum(['capacity', 'balance', 'daily_cap']).optional(),
});
export type TwilioSession = z.infer<typeof TwilioSession>;

/**
 * POST /v1/sessions/twilio/outbound (extension). `variables` fill `{{name}}`s in the agent's voicemail message;
 * `webhookUrl` receives the call's `session.answered_by` event (Standard Webhooks).
 */
export const CreateOutboundCallBody = z
  .object({
    agentId: z.string().min(1).max(60),
    from: Phone,
    to: Phone,
    variables: z
      .record(
        z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'variable names are 1-64 letters, digits, "_", "-", "."'),
        z.union([z.string().max(2000), z.number(), z.boolean()]),
      )
      .refine((v) => Object.keys(v).length <= 50, 'at most 50 variables')
      .optional(),
    webhookUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
  })
  .strict();
export type CreateOutboundCallBody = z.infer<typeof CreateOutboundCallBody>;

export const AnsweredBy = z.enum(['human', 'machine', 'unknown']);

/** Why a session ended (end-reasons.ts lists each with its meaning; docs/realtime.md has the table). */
export const SessionEndReason = z.enum(SESSION_END_REASONS);
export type SessionEndReason = z.infer<typeof SessionEndReason>;

export const CreateDirectSessionBody = z.object({
  agentId: z.string().min(1).max(60),
  instanceId: z.string().min(1).max(100).optional(),
  agentVersion: AgentVersionField,
  variables: SessionVariables.optional(),
  webhookUrl: SessionWebhookUrl,
  ...CallLimitFields,
});
export type CreateDirectSessionBody = z.infer<typeof CreateDirectSessionBody>;
export const DirectSessionToken = z.object({
  sessionId: z.string(),
  agentId: z.string(),
  token: z.string(),
  /** ws(s)://…/v1/agents/:id/session?token=… */
  url: z.string(),
  expiresAt: z.string(),
});

/**
 * What kind of call a session was (derived from where it came from, not stored): `inbound` and `outbound` phone
 * calls, `campaign` (a campaign's attempt), `browser` (a direct WebSocket session), `test` (an agent test's
 * scenario call) and `replay` (a call replay's run).
 */
export const SESSION_KINDS = ['inbound', 'outbound', 'campaign', 'browser', 'test', 'replay'] as const;
export const SessionKind = z.enum(SESSION_KINDS);
export type SessionKind = z.infer<typeof SessionKind>;

export const SessionSummary = z.object({
  id: z.string(),
  agentId: z.string(),
  kind: SessionKind,
  /** Absent until the call connected. */
  startedAt: z.string().optional(),
  /** Absent while the call goes on. */
  endedAt: z.string().optional(),
  turns: z.number(),
  status: z.string(),
  channel: z.string(),
  /** The telephony provider's call id; absent on direct (browser) sessions. */
  callId: z.string().optional(),
  /** Outbound calls: who answered (absent until decided, and on inbound calls). */
  answeredBy: AnsweredBy.optional(),
  /** Why the session ended (absent while it runs), e.g. `caller-hangup`, `start-failed`. */
  endReason: SessionEndReason.optional(),
  /** Failed sessions: what went wrong, in words (a session that could not start says why). */
  error: z.string().optional(),
  /** The agent configuration version the call ran (GET /v1/agents/{id}/versions/{n}); absent before versions. */
  agentVersion: z.number().int().optional(),
});
export type SessionSummary = z.infer<typeof SessionSummary>;

export const SessionListQuery = z.object({
  agentId: z.string().min(1).max(60).optional(),
  /** Only sessions of this kind (SESSION_KINDS). */
  kind: SessionKind.optional(),
  /** Only sessions that ended for this reason (end-reasons.ts). */
  endReason: SessionEndReason.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional(),
});

export const SessionTurn = z.object({
  index: z.number(),
  speaker: z.string(),
  text: z.string(),
  startMs: z.number(),
  endMs: z.number(),
  sttMs: z.number(),
  llmMs: z.number(),
  ttsMs: z.number(),
  /**
   * Caller's last speech sample → first agent audio sent (assistant turns that answer the caller); absent on other
   * turns. Like every extension field here, absent rather than null when not known.
   */
  latencyMs: z.number().optional(),
  /** The endpointing silence waited before the turn was taken; absent when none was measured. */
  endpointMs: z.number().optional(),
  /** Latency not spent in STT, LLM, TTS or endpointing: the platform's own overhead; absent when not measured. */
  overheadMs: z.number().optional(),
  interrupted: z.boolean(),
  /** Extension: an interrupted reply's whole text (`text` is what was said before the interruption). */
  fullText: z.string().optional(),
  /** Assistant turns: the caller went on speaking within 500 ms after this reply started (a likely cut-in). */
  suspectedCutIn: z.boolean(),
  /**
   * Extension, caller turns of a phone call whose STT can fall back mid-call: the STT engine whose final made the
   * turn (the session's `sttProvider`, or `default` when the local recogniser had taken over); absent otherwise.
   */
  sttEngine: z.string().optional(),
});

export const SessionDetail = z.object({
  id: z.string(),
  agentId: z.string(),
  kind: SessionKind,
  status: z.string(),
  channel: z.string(),
  callId: z.string().optional(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  turns: z.array(SessionTurn),
  metrics: z.object({
    totalDurationMs: z.number(),
    avgTurnLatencyMs: z.number(),
    toolExecutions: z.number(),
    interruptions: z.number(),
    /** Replies after which the caller went on within 500 ms (see turns[].suspectedCutIn). */
    suspectedCutIns: z.number(),
  }),
  toolExecutions: z.array(
    z.object({
      turn: z.number(),
      name: z.string(),
      ok: z.boolean(),
      /** Absent when the tool succeeded. */
      error: z.string().optional(),
      durationMs: z.number(),
      atMs: z.number(),
    }),
  ),
  interruptions: z.array(
    z.object({
      turn: z.number(),
      atMs: z.number(),
      detectionMs: z.number(),
      stopMs: z.number(),
      bleedThroughWords: z.number(),
    }),
  ),
  /** Absent when the call has no recording. */
  recordingUrl: z.string().optional(),
  /** Why the session ended (caller-hangup, voicemail-left, transferred, agent-ended, …); absent while it goes on. */
  endReason: SessionEndReason.optional(),
  answeredBy: AnsweredBy.optional(),
  /** The agent configuration version the call ran (GET /v1/agents/{id}/versions/{n}); absent before versions. */
  agentVersion: z.number().int().optional(),
  /** When the answering machine's beep started (ms from the session start); absent when no beep was heard. */
  beepAtMs: z.number().optional(),
  /** Present when the agent handed the call to a person (transfer_call). */
  transfer: z
    .object({ target: z.string(), to: z.string(), mode: z.enum(['cold', 'warm']), atMs: z.number() })
    .optional(),
  /**
   * Extension: the engines the call ran on, as the trace recorded them; `llmLabel` says what the LLM provider
   * is (the local reply engine is a knowledge lookup, not a language model).
   */
  engines: z.object({ stt: z.string(), tts: z.string(), llm: z.string(), llmLabel: z.string() }).optional(),
  /**
   * Extension (issue #33): the post-call analysis, once it has run (the agent's `analysis`; the same object the
   * `call.analyzed` webhook carries). Absent while it runs and when the agent asks for none.
   */
  analysis: CallAnalysis.optional(),
  /**
   * Extension (issue #33): what this call cost, from its own ledger rows (minutes, STT, TTS, LLM, analysis), and
   * whether its holds are all settled yet (a call's charges land a moment after it ends).
   */
  cost: z.object({ credits: z.number(), settled: z.boolean() }).optional(),
  /** Extension: the message the caller left with `take_message`, as soon as it was taken. */
  takenMessage: TakenMessage.optional(),
});
export type SessionDetail = z.infer<typeof SessionDetail>;

export const RootCauseIssue = z.object({
  type: z.string(),
  turn: z.number(),
  description: z.string(),
  recommendation: z.string(),
});
export const RootCauseReport = z.object({
  sessionId: z.string(),
  callId: z.string().optional(),
  issues: z.array(RootCauseIssue),
});
export type RootCauseIssue = z.infer<typeof RootCauseIssue>;
export type RootCauseReport = z.infer<typeof RootCauseReport>;

export const InterruptionQualityQuery = z.object({
  agentId: z.string().min(1).max(60).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
});
const Dist = z.object({ avg: z.number().nullable(), p50: z.number().nullable(), p95: z.number().nullable() });
export const InterruptionQuality = z.object({
  /** The filters applied, absent when not given. */
  agentId: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  sessions: z.number(),
  interruptions: z.number(),
  /** Interruptions per session that had any agent speech. */
  interruptionsPerSession: z.number(),
  detectionLatencyMs: Dist,
  stopLatencyMs: Dist,
  bleedThroughWords: Dist.extend({ total: z.number() }),
  /** Replies to caller speech, those suspected of cutting in (the caller went on within 500 ms), and the share. */
  suspectedCutIns: z.object({ replies: z.number(), suspected: z.number(), rate: z.number() }),
});
export type InterruptionQuality = z.infer<typeof InterruptionQuality>;

/** Suspected cut-ins per agent: replies after which the caller went on speaking within 500 ms. */
export const CutInRates = z.object({
  from: z.string().optional(),
  to: z.string().optional(),
  data: z.array(z.object({ agentId: z.string(), replies: z.number(), suspectedCutIns: z.number(), rate: z.number() })),
});
export type CutInRates = z.infer<typeof CutInRates>;

export const SessionIdParams = z.object({ sessionId: z.string().min(1).max(100) });
export const CallIdParams = z.object({ callId: z.string().min(1).max(100) });
export const TaskIdParams = z.object({ taskId: z.string().min(1).max(100) });
