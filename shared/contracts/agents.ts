import { z } from 'zod';
import { Collection, IngestResult } from './rag.ts';
import { EMBEDDING_PROVIDERS, LLM_PROVIDERS, TTS_PROVIDERS } from './providers.ts';
import { AudioSettings, InterruptionChoice, TurnDetectorChoice } from './turn-seams.ts';
import { AnalysisSettings } from './call-analysis.ts';

/** Reserved name of the built-in tool that searches the agent's collection. */
export const KNOWLEDGE_TOOL_NAME = 'search_knowledge';
export const DEFAULT_MAX_TOKENS = 1024;

const Metadata = z
  .record(z.string().min(1).max(100), z.unknown())
  .refine((m) => JSON.stringify(m).length <= 16_384, 'metadata must serialise to at most 16 KB');

/**
 * Voice style (extension: the contract leaves the inner fields open). Every field optional; engines use what
 * they support: `speed`/`pitch` by every engine with those capabilities, `stability`/`similarityBoost`/`style`
 * by ElevenLabs-kind voices, `emotion`/`instructions` by engines that take a style hint.
 */
export const StyleProfile = z
  .object({
    speed: z.number().min(0.5).max(2).optional(),
    pitch: z.number().min(0.5).max(2).optional(),
    stability: z.number().min(0).max(1).optional(),
    similarityBoost: z.number().min(0).max(1).optional(),
    style: z.number().min(0).max(1).optional(),
    emotion: z.string().max(50).optional(),
    instructions: z.string().max(500).optional(),
  })
  .strict();
export type StyleProfile = z.infer<typeof StyleProfile>;

/**
 * Turn taking on voice sessions (extension): how long a silence ends the caller's turn, and whether the reply is
 * prepared before it ends. Unset fields take the platform's REALTIME_ENDPOINTING_* / REALTIME_PREEMPTIVE_REPLIES
 * defaults; see docs/realtime.md.
 */
export const TurnTaking = z
  .object({
    endpointingMs: z.number().int().min(100).max(3000).optional(),
    adaptive: z.boolean().optional(),
    completeMs: z.number().int().min(100).max(3000).optional(),
    incompleteMs: z.number().int().min(100).max(5000).optional(),
    preemptive: z.boolean().optional(),
    eagerness: z.enum(['low', 'normal', 'high']).optional(),
    /** Which turn detector decides the end of the caller's turn (turn-seams.ts); unset = `default`. */
    detector: TurnDetectorChoice.optional(),
    /** Which interruption detector decides a barge-in, per agent phase (turn-seams.ts); unset = `default`. */
    interruption: InterruptionChoice.optional(),
  })
  .strict()
  .refine((t) => t.completeMs === undefined || t.endpointingMs === undefined || t.completeMs <= t.endpointingMs, {
    message: 'completeMs must not exceed endpointingMs',
    path: ['completeMs'],
  })
  .refine((t) => t.incompleteMs === undefined || t.endpointingMs === undefined || t.incompleteMs >= t.endpointingMs, {
    message: 'incompleteMs must be at least endpointingMs',
    path: ['incompleteMs'],
  })
  .refine((t) => t.completeMs === undefined || t.incompleteMs === undefined || t.completeMs <= t.incompleteMs, {
    message: 'completeMs must not exceed incompleteMs',
    path: ['completeMs'],
  });
export type TurnTaking = z.infer<typeof TurnTaking>;

// ── phone calls (issue 22: voicemail, transfer, hang-up) ────────────────────────────────────────────────────
/** Built-in call-control tools (reserved names: custom tools may not use them). */
export const TRANSFER_TOOL_NAME = 'transfer_call';
export const END_CALL_TOOL_NAME = 'end_call';
export const TAKE_MESSAGE_TOOL_NAME = 'take_message';
const BUILT_IN_TOOLS = [KNOWLEDGE_TOOL_NAME, TRANSFER_TOOL_NAME, END_CALL_TOOL_NAME, TAKE_MESSAGE_TOOL_NAME];

/**
 * What an outbound call does when an answering machine picks up: hang up, or wait for the beep (or the end of the
 * greeting), speak `message` and hang up. `message` may hold `{{variable}}`s filled from the call's variables.
 */
export const Voicemail = z
  .object({
    action: z.enum(['hangup', 'leave_message']),
    message: z.string().trim().max(1000).optional(),
  })
  .strict()
  .refine((v) => v.action !== 'leave_message' || Boolean(v.message), {
    message: 'leave_message needs a message',
    path: ['message'],
  });
export type Voicemail = z.infer<typeof Voicemail>;

/**
 * Defaults of the agent's template variables: `{{name}}` in the prompt, first message and voicemail message takes
 * the call's variable of that name, else this default, else is left out (never spoken with its braces).
 */
export const AgentVariables = z
  .record(
    z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a variable name is 1-64 letters, digits, "_", "." or "-"'),
    z.object({ default: z.string().max(500) }).strict(),
  )
  .refine((v) => Object.keys(v).length <= 50, { message: 'at most 50 variables' });
export type AgentVariables = z.infer<typeof AgentVariables>;

/** Where `transfer_call` may send the caller: an E.164 number or a SIP address. */
export const TransferTarget = z
  .object({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,40}$/, 'name must be 1-40 letters, digits, "_" or "-"'),
    to: z.string().regex(/^(\+[1-9]\d{6,14}|sips?:[^\s<>"]{3,200})$/, 'to must be an E.164 number or a sip: address'),
    /** cold: the caller is put through at once; warm: the person first hears who is calling and why. */
    mode: z.enum(['cold', 'warm']).default('cold'),
    description: z.string().max(300).default(''),
  })
  .strict();
export type TransferTarget = z.infer<typeof TransferTarget>;

/**
 * The call tools an agent is given on voice calls: `transfer_call` with its targets, `end_call`, and `take_message`
 * (caller name, callback number, message, urgency: stored on the call and sent in `call.analyzed`; on the local
 * reply engine the agent asks for each missing field in turn).
 */
export const CallTools = z
  .object({
    endCall: z.boolean().default(false),
    takeMessage: z.boolean().optional().describe('Offer the built-in take_message tool (extension, issue #33)'),
    transferTargets: z
      .array(TransferTarget)
      .max(10)
      .default([])
      .refine((ts) => new Set(ts.map((t) => t.name)).size === ts.length, 'target names must be unique'),
  })
  .strict();
export type CallTools = z.infer<typeof CallTools>;

/** A JSON Schema for a tool's arguments: an object schema. */
const ToolParameters = z
  .record(z.string(), z.unknown())
  .refine((s) => s.type === 'object', 'parameters must be a JSON Schema with type "object"')
  .refine((s) => JSON.stringify(s).length <= 16_384, 'parameters must serialise to at most 16 KB');

/**
 * A custom tool (extension): the model may call it; the platform POSTs the call to `url` signed with
 * Standard Webhooks (the agent's `toolSigningSecret`) and hands the response body back to the model.
 */
export const AgentTool = z
  .object({
    name: z
      .string()
      .regex(/^[a-zA-Z0-9_-]{1,64}$/, 'name must be 1-64 letters, digits, "_" or "-"')
      .refine((n) => !BUILT_IN_TOOLS.includes(n), 'that name belongs to a built-in tool'),
    description: z.string().min(1).max(1024),
    parameters: ToolParameters.default({ type: 'object', properties: {} }),
    url: z.url({ protocol: /^https?$/ }).max(2048),
    timeoutMs: z.number().int().min(100).max(30_000).default(5_000),
  })
  .strict();
export type AgentTool = z.infer<typeof AgentTool>;

const Tools = z
  .array(AgentTool)
  .max(16)
  .refine((ts) => new Set(ts.map((t) => t.name)).size === ts.length, 'tool names must be unique');

const Language = z
  .string()
  .regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'language must be a language code such as "en" or "pt-BR"')
  .max(35);

/** Fields a client may set. Bounds and enums are the contract's. */
const agentFields = {
  name: z.string().trim().min(1).max(100),
  description: z.string().max(1000),
  systemPrompt: z.string().max(10_000),
  firstMessage: z.string().max(1000),
  voiceId: z.string().min(1).max(200),
  ttsProvider: z.enum(TTS_PROVIDERS),
  ttsModel: z.string().min(1).max(200).nullable(),
  llmProvider: z.enum(LLM_PROVIDERS),
  llmModel: z.string().min(1).max(200),
  collectionId: z.string().min(1).max(100).nullable(),
  styleProfile: StyleProfile.nullable(),
  turnTaking: TurnTaking.nullable(),
  audio: AudioSettings.nullable(),
  voicemail: Voicemail.nullable(),
  variables: AgentVariables.nullable(),
  callTools: CallTools.nullable(),
  analysis: AnalysisSettings.nullable().describe(
    'Post-call analysis: a summary, structured data by JSON Schema, a success verdict (docs/agents.md)',
  ),
  language: Language,
  temperature: z.number().min(0).max(2),
  maxTokens: z.number().int().min(1).max(16_384),
  maxDurationSeconds: z
    .number()
    .int()
    .min(10)
    .max(24 * 3600)
    .nullable()
    .describe('Per-call cap on a voice call: the agent says its goodbye and ends the call (reason max-duration)'),
  maxCredits: z
    .number()
    .int()
    .min(1)
    .max(1e12)
    .nullable()
    .describe('Per-call cap in credits: the call ends (reason max-credits) before a reply would pass it'),
  goodbyeMessage: z
    .string()
    .trim()
    .min(1)
    .max(1000)
    .nullable()
    .describe('Said when a cap or the balance ends a call; null = the platform default'),
  metadata: Metadata,
  tools: Tools,
};

function optionalShape<T extends Record<string, z.ZodType>>(shape: T): { [K in keyof T]: z.ZodOptional<T[K]> } {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof T]: z.ZodOptional<T[K]>;
  };
}

const createShape = {
  ...optionalShape(agentFields),
  id: z
    .string()
    .min(1)
    .max(60)
    .regex(/^[A-Za-z0-9_.:-]+$/, 'id may hold letters, digits, "_", "-", "." and ":"')
    .optional(),
  name: agentFields.name,
  status: z.literal('active').optional(),
};

export const CreateAgentBody = z.object(createShape).strict();
export type CreateAgentBody = z.infer<typeof CreateAgentBody>;

/** Fields of an agent that the server sets. PUT accepts and ignores them, so the body GET returned can be sent back. */
export const AGENT_READ_ONLY = ['id', 'toolSigningSecret', 'version', 'createdAt', 'updatedAt'] as const;
const readOnly = Object.fromEntries(
  AGENT_READ_ONLY.map((k) => [k, z.unknown().optional().describe('Read-only: accepted and ignored')]),
) as Record<(typeof AGENT_READ_ONLY)[number], z.ZodOptional<z.ZodUnknown>>;

/**
 * PUT: every field optional; only fields present change. `status` may archive or restore an agent. Read-only
 * fields (id, toolSigningSecret, createdAt, updatedAt) are ignored; unknown fields are still a 400.
 */
export const UpdateAgentBody = z
  .object({ ...optionalShape(agentFields), status: z.enum(['active', 'archived']).optional(), ...readOnly })
  .strict();
export type UpdateAgentBody = z.infer<typeof UpdateAgentBody>;

export const Agent = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  systemPrompt: z.string(),
  firstMessage: z.string(),
  voiceId: z.string(),
  ttsProvider: z.string(),
  ttsModel: z.string().nullable(),
  llmProvider: z.string(),
  llmModel: z.string(),
  collectionId: z.string().nullable(),
  styleProfile: StyleProfile.nullable(),
  // Our extensions are absent when not set, never null (the contract's convention: "absent when no expiry");
  // only the contract's own "or null" fields above answer null.
  turnTaking: TurnTaking.optional(),
  audio: AudioSettings.optional(),
  voicemail: Voicemail.optional(),
  /** Absent when the agent declares no variable defaults. */
  variables: AgentVariables.optional(),
  callTools: CallTools.optional(),
  /** Absent when the agent asks for no post-call analysis. */
  analysis: AnalysisSettings.optional(),
  language: z.string(),
  temperature: z.number(),
  maxTokens: z.number(),
  maxDurationSeconds: z.number().optional(),
  maxCredits: z.number().optional(),
  /** Absent when the agent has none (the platform's goodbye is said). */
  goodbyeMessage: z.string().optional(),
  status: z.enum(['active', 'archived']),
  metadata: z.record(z.string(), z.unknown()),
  tools: z.array(AgentTool),
  toolSigningSecret: z
    .string()
    .optional()
    .describe(
      'Only in the creation response: reveal it with GET /v1/agents/{id}/tool-signing-secret, replace it with POST /v1/agents/{id}/tool-signing-secret/rotate',
    ),
  version: z
    .number()
    .int()
    .describe('The configuration version: 1 at creation, +1 on every update that changes the configuration'),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Agent = z.infer<typeof Agent>;

/**
 * An immutable snapshot of an agent's configuration (extension, issue 21): every create and every update that
 * changes the configuration makes the next one. Sessions record the version they ran (`agentVersion`), and a call
 * replay may run any version.
 */
export const AgentVersion = z.object({
  agentId: z.string(),
  version: z.number().int(),
  createdAt: z.string(),
  config: Agent.omit({
    id: true,
    status: true,
    toolSigningSecret: true,
    version: true,
    createdAt: true,
    updatedAt: true,
  }),
});
export type AgentVersion = z.infer<typeof AgentVersion>;
export const AgentVersionParams = z.object({
  id: z.string().min(1).max(60),
  version: z.coerce.number().int().min(1).max(2_147_483_647),
});

export const AgentParams = z.object({ id: z.string().min(1).max(60) });

/** The Standard Webhooks secret custom tool calls are signed with (reveal and rotate routes). */
export const ToolSigningSecret = z.object({ agentId: z.string(), toolSigningSecret: z.string() });
export type ToolSigningSecret = z.infer<typeof ToolSigningSecret>;

// ── provisioning ────────────────────────────────────────────────────────────────────────────────────────────
export const InitialContent = z
  .object({
    content: z
      .string()
      .min(1)
      .max(1024 * 1024),
    contentType: z.enum(['text', 'transcript']).default('text'),
    metadata: Metadata.optional(),
  })
  .strict();

/** Agent fields at the top level (the agent's collection is the one created here), plus the collection. */
export const ProvisionBody = z
  .object({
    ...createShape,
    collectionId: z.undefined({ error: 'collectionId is set by provisioning; omit it' }).optional(),
    collection: z
      .object({
        name: z.string().trim().min(1).max(100),
        description: z.string().max(500).optional(),
        metadata: Metadata.optional(),
        /** Extension (as on POST /v1/collections): the collection's embedder. */
        embeddingProvider: z.enum(EMBEDDING_PROVIDERS).optional(),
      })
      .strict(),
    initialContent: z.array(InitialContent).max(50).default([]),
  })
  .strict();
export type ProvisionBody = z.infer<typeof ProvisionBody>;

export const ProvisionResponse = z.object({
  agent: Agent,
  collection: Collection,
  ingestResults: z.array(IngestResult),
});
export type ProvisionResponse = z.infer<typeof ProvisionResponse>;

// ── chat ────────────────────────────────────────────────────────────────────────────────────────────────────
export const ChatBody = z
  .object({
    message: z.string().min(1).max(10_000),
    conversationId: z.string().min(1).max(100).optional(),
    instanceId: z.string().min(1).max(100).optional(),
    callerPhone: z.string().min(1).max(32).optional(),
    maxSteps: z.number().int().min(1).max(8).default(5),
    /** Extension: answer as Server-Sent Events (delta, tool_call, tool_result, done | error). */
    stream: z.boolean().default(false),
  })
  .strict();
export type ChatBody = z.infer<typeof ChatBody>;

export const ToolCallRecord = z.object({
  id: z.string(),
  name: z.string(),
  /** Parsed arguments (the raw text when the model produced invalid JSON). */
  arguments: z.unknown(),
  result: z.string().nullable(),
  durationMs: z.number(),
  error: z.string().nullable(),
});
export type ToolCallRecord = z.infer<typeof ToolCallRecord>;

/** A tool call as the API shows it: the record with `result` or `error` absent when unset, not null (issue 23). */
export const ToolCallView = ToolCallRecord.extend({ result: z.string().optional(), error: z.string().optional() });
export type ToolCallView = z.infer<typeof ToolCallView>;

export const Usage = z.object({ inputTokens: z.number(), outputTokens: z.number() });

export const ChatResponse = z.object({
  reply: z.string(),
  conversationId: z.string(),
  turnIndex: z.number(),
  toolCalls: z.array(ToolCallView),
  usage: Usage,
});
export type ChatResponse = z.infer<typeof ChatResponse>;

// ── conversations (extension) ────────────────────────────────────────────────────────────────────────────
export const ConversationSummary = z.object({
  id: z.string(),
  agentId: z.string(),
  /** Absent when the conversation is not an instance's. */
  instanceId: z.string().optional(),
  turnCount: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ConversationSummary = z.infer<typeof ConversationSummary>;

export const ConversationTurn = z.object({
  turnIndex: z.number(),
  message: z.string(),
  reply: z.string(),
  toolCalls: z.array(ToolCallView),
  usage: Usage,
  createdAt: z.string(),
});

export const Conversation = ConversationSummary.extend({ turns: z.array(ConversationTurn) });
export type Conversation = z.infer<typeof Conversation>;

export const ConversationParams = z.object({
  id: z.string().min(1).max(60),
  conversationId: z.string().min(1).max(100),
});

// ── instances (extension) ──────────────────────────────────────────────────────────────────────────────────
const ContextValue = z.union([z.string().max(2000), z.number(), z.boolean()]);
export const PhoneNumber = z.string().regex(/^\+[1-9]\d{6,14}$/, 'phoneNumber must be E.164, e.g. +14155550123');

export const CreateInstanceBody = z
  .object({
    name: z.string().max(100).default(''),
    phoneNumber: PhoneNumber.nullable().default(null),
    context: z
      .record(
        z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'context keys are 1-64 letters, digits, "_", "-", "."'),
        ContextValue,
      )
      .refine((c) => Object.keys(c).length <= 50, 'at most 50 context variables')
      .default({}),
    metadata: Metadata.default({}),
  })
  .strict();
export type CreateInstanceBody = z.infer<typeof CreateInstanceBody>;

export const AgentInstance = z.object({
  id: z.string(),
  agentId: z.string(),
  name: z.string(),
  /** Absent when the instance has no number. */
  phoneNumber: z.string().optional(),
  context: z.record(z.string(), ContextValue),
  metadata: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
});
export type AgentInstance = z.infer<typeof AgentInstance>;

export const InstanceParams = z.object({ id: z.string().min(1).max(60), instanceId: z.string().min(1).max(100) });

// ── speak / sync ────────────────────────────────────────────────────────────────────────────────────────────
export const SpeakBody = z
  .object({
    // Bounds as POST /v1/synthesize: text 1-10,000, speed 0.5-2.
    text: z.string().min(1).max(10_000),
    format: z.enum(['mp3', 'wav', 'ogg']).default('mp3'),
    speed: z.number().min(0.5).max(2).optional(),
  })
  .strict();
export type SpeakBody = z.infer<typeof SpeakBody>;

export const SYNC_PROVIDERS = ['vapi'] as const;
/** The body is optional: an empty POST syncs to the default platform. */
export const SyncBody = z.preprocess(
  (v) => v ?? {},
  z.object({ provider: z.enum(SYNC_PROVIDERS).default('vapi') }).strict(),
);
export const SyncResponse = z.object({ synced: z.boolean(), externalAgentId: z.string(), provider: z.string() });
export type SyncResponse = z.infer<typeof SyncResponse>;

/**
 * GET /v1/llm-providers (extension): each LLM provider an agent may name, what it is, and whether this developer
 * can use it now: `key` says where its key would come from (`platform`, `stored`, `none`, or `not-needed` for the
 * local reply engine); a caller's `X-Provider-Key-<Vendor>` header makes a `none` vendor usable per request.
 */
export const LlmProviderInfo = z.object({
  id: z.enum(LLM_PROVIDERS),
  label: z.string(),
  /** False for the local reply engine: it looks answers up, it does not generate them. */
  languageModel: z.boolean(),
  defaultModel: z.string(),
  key: z.enum(['platform', 'stored', 'none', 'not-needed']),
  usable: z.boolean(),
  /** The provider an agent created without `llmProvider` gets. */
  isDefault: z.boolean(),
});
export type LlmProviderInfo = z.infer<typeof LlmProviderInfo>;
export const LlmProviderList = z.object({ data: z.array(LlmProviderInfo) });
