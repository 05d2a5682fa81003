import { z } from 'zod';
import { ScriptedLlm } from './agent-tests.ts';
import { SessionVariables } from './sessions.ts';

/**
 * Call replay (issue 21 item 4): a recorded call's caller leg, cut into the caller's turns at their original
 * timing, is played again through the agent (as it is now, or as one of its versions), and each turn is compared:
 * what the agent said then and now, its latency, interruptions and suspected cut-ins.
 */
export const CallReplayBody = z
  .object({
    version: z
      .number()
      .int()
      .min(1)
      .max(2_147_483_647)
      .optional()
      .describe('Agent configuration version to replay against (default: the agent as it is now)'),
    variables: SessionVariables.optional().describe(
      "The replay call's template variables ({{name}} in the prompt and first message), as the original call's body gave them",
    ),
    llm: ScriptedLlm.optional().describe(
      "Scripted replies instead of the agent's LLM (OpenAI-protocol providers: openai, groq): an offline replay",
    ),
  })
  .strict();
export type CallReplayBody = z.infer<typeof CallReplayBody>;

const ThenNow = <T extends z.ZodType>(t: T) => z.object({ then: t, now: t });

export const ReplayTurn = z.object({
  /** 0 is the greeting (the agent's first message); 1… answer the caller's turns in order. */
  index: z.number().int(),
  /** What the platform heard the caller say (then: the recorded call's transcript; now: the replay's STT). */
  caller: ThenNow(z.string().nullable()),
  reply: ThenNow(z.string().nullable()).extend({ changed: z.boolean() }),
  /** Caller's last speech → the agent's first audio, as the platform measured it (null: no reply). */
  latencyMs: ThenNow(z.number().nullable()),
  /** The caller barged in on this reply. */
  interrupted: ThenNow(z.boolean()),
  /** The caller went on within 500 ms after the reply started: the agent likely took a pause for the end. */
  cutIn: ThenNow(z.boolean()),
  /** Set when the turn could not be replayed (a keypad turn, no audio in the recording). */
  skipped: z.string().nullable(),
});
export type ReplayTurn = z.infer<typeof ReplayTurn>;

const ThenNowText = z.object({ then: z.string().optional(), now: z.string().optional() });
/** A measure of then and now, each absent when there is none (issue 34: absent, never null, across the API). */
const ThenNowNumber = z.object({ then: z.number().optional(), now: z.number().optional() });

/** A turn as the API shows it: the diff's record with its unset texts and latencies absent rather than null. */
export const ReplayTurnView = ReplayTurn.extend({
  caller: ThenNowText,
  reply: ThenNowText.extend({ changed: z.boolean() }),
  /** Caller's last speech → the agent's first audio, as the platform measured it (absent: no reply). */
  latencyMs: ThenNowNumber,
  skipped: z.string().optional(),
});
export type ReplayTurnView = z.infer<typeof ReplayTurnView>;

export const ReplaySummary = z.object({
  turns: z.number().int(),
  changedReplies: z.number().int(),
  avgLatencyMs: ThenNow(z.number().nullable()),
  interruptions: ThenNow(z.number().int()),
  cutIns: ThenNow(z.number().int()),
});
export type ReplaySummary = z.infer<typeof ReplaySummary>;

/** The summary as the API shows it: an average latency absent when no reply was measured. */
export const ReplaySummaryView = ReplaySummary.extend({ avgLatencyMs: ThenNowNumber });
export type ReplaySummaryView = z.infer<typeof ReplaySummaryView>;

export const ReplayStatus = z.enum(['queued', 'running', 'completed', 'failed']);

export const CallReplay = z.object({
  id: z.string(),
  /** The replayed call (its CallSid, or the session id of a browser call) and its session. */
  callId: z.string(),
  sessionId: z.string(),
  agentId: z.string(),
  /** The version the call ran then (absent: a call from before versions) and the one replayed now. */
  agentVersion: z.object({ then: z.number().int().optional(), now: z.number().int().optional() }),
  status: ReplayStatus,
  progress: z.object({ turnsDone: z.number().int(), turnsTotal: z.number().int() }),
  /** What transcribed and what answered in the replay, labelled for what they are (simulated STT, local engine…). */
  stt: z.string().optional(),
  llm: z.string().optional(),
  /** The replay's own session (its call page, recording and trace); absent until it starts. */
  replaySessionId: z.string().optional(),
  turns: z.array(ReplayTurnView),
  /** Absent until the replay has finished. */
  summary: ReplaySummaryView.optional(),
  error: z.string().optional(),
  createdAt: z.string(),
  finishedAt: z.string().optional(),
});
export type CallReplay = z.infer<typeof CallReplay>;

export const CallReplayParams = z.object({
  callId: z.string().min(1).max(100),
  replayId: z.string().min(1).max(100),
});
