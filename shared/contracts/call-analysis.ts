import { z } from 'zod';

/** The webhook event sent once per analysed call (Standard Webhooks, PROTOCOLS.md). */
export const CALL_ANALYZED_EVENT = 'call.analyzed';

/** Bounds of a structured-data schema: a model is asked to fill it, so it must stay small enough to prompt with. */
export const ANALYSIS_SCHEMA_MAX_CHARS = 8_192;
export const ANALYSIS_SCHEMA_MAX_DEPTH = 6;

function depth(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  const children = Array.isArray(v) ? v : Object.values(v);
  return 1 + children.reduce<number>((d, c) => Math.max(d, depth(c)), 0);
}

/** A JSON Schema of an object, bounded in size and depth (it compiles: checked when the agent is saved). */
const AnalysisSchema = z
  .record(z.string(), z.unknown())
  .refine((s) => s.type === 'object', 'schema must be a JSON Schema with type "object"')
  .refine(
    (s) => JSON.stringify(s).length <= ANALYSIS_SCHEMA_MAX_CHARS,
    `schema must serialise to at most ${ANALYSIS_SCHEMA_MAX_CHARS} characters`,
  )
  .refine((s) => depth(s) <= ANALYSIS_SCHEMA_MAX_DEPTH, `schema may nest at most ${ANALYSIS_SCHEMA_MAX_DEPTH} levels`);

/**
 * Post-call analysis (extension, issue #33): what to work out of a finished call. It runs after the call on the
 * agent's LLM (metered as `call.analyze`); on the local reply engine a rule-based extractor finds what rules can
 * (phone numbers, names, dates and times, a callback request) and says which of these parts it cannot do.
 */
export const AnalysisSettings = z
  .object({
    /** A few sentences on what the call was about and how it ended. */
    summary: z.boolean().optional(),
    /** Fields to fill from the call, described by a JSON Schema (type "object"). */
    structuredData: z.object({ schema: AnalysisSchema }).strict().optional(),
    /** What counts as a successful call, in words; the result says whether it was met, and why. */
    successCriteria: z.string().trim().min(1).max(2000).optional(),
  })
  .strict();
export type AnalysisSettings = z.infer<typeof AnalysisSettings>;

/** A message left with the agent's `take_message` tool (on any LLM, and on the local engine field by field). */
export const TakenMessage = z.object({
  callerName: z.string().optional(),
  callbackNumber: z.string().optional(),
  message: z.string(),
  urgency: z.enum(['low', 'normal', 'high']),
});
export type TakenMessage = z.infer<typeof TakenMessage>;

/** What the rule-based extractor found in the caller's words. */
export const ExtractedFacts = z.object({
  phoneNumbers: z.array(z.string()),
  names: z.array(z.string()),
  dateTimes: z.array(z.string()),
  callbackRequested: z.boolean(),
});
export type ExtractedFacts = z.infer<typeof ExtractedFacts>;

/** The analysis of one call, as stored on the session and sent in `call.analyzed`. */
export const CallAnalysis = z.object({
  status: z.enum(['completed', 'failed']),
  /**
   * What produced it, in words: the agent's LLM (provider and model), or the local rule-based extractor. Absent when
   * no engine was asked: the agent asks for no analysis and the call only took a message (`message`).
   */
  engine: z
    .object({
      kind: z.enum(['llm', 'rules']),
      provider: z.string(),
      model: z.string().optional(),
      label: z.string(),
    })
    .optional(),
  summary: z.string().optional(),
  structuredData: z.record(z.string(), z.unknown()).optional(),
  /** Present when the model's data did not match the schema: the data is kept, this says what is wrong. */
  structuredDataError: z.string().optional(),
  success: z.object({ success: z.boolean(), reason: z.string() }).optional(),
  /** The rule-based extractor's findings (local engine). */
  extracted: ExtractedFacts.optional(),
  /** Parts the agent asked for that this engine cannot produce (the rule-based extractor writes no summary). */
  notAvailable: z.array(z.enum(['summary', 'structuredData', 'successCriteria'])).optional(),
  /** The message left through `take_message`, when one was. */
  message: TakenMessage.optional(),
  /** Failed analyses: why, in words. */
  error: z.string().optional(),
  analyzedAt: z.string(),
});
export type CallAnalysis = z.infer<typeof CallAnalysis>;
