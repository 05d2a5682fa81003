import { argumentProblem } from '../../agents/tools/tool-schema.ts';
import type { LlmEngine, LlmMessage, LlmUsage } from '../../../engines/llm/types.ts';
import type { AnalysisSettings, CallAnalysis } from '../../../contracts/call-analysis.ts';

/** Most transcript characters sent to the model: the end of a long call is kept (that is where it is decided). */
const MAX_TRANSCRIPT_CHARS = 40_000;
export const ANALYSIS_MAX_TOKENS = 1024;

export interface TranscriptLine {
  speaker: string;
  text: string;
}

/** The call as the model reads it: one line per turn, `Agent:` / `Caller:`. */
export function transcriptText(turns: TranscriptLine[]): string {
  const text = turns
    .filter((t) => t.text.trim())
    .map((t) => `${t.speaker === 'assistant' ? 'Agent' : 'Caller'}: ${t.text.trim()}`)
    .join('\n');
  return text.length > MAX_TRANSCRIPT_CHARS ? `…${text.slice(-MAX_TRANSCRIPT_CHARS)}` : text;
}

/** The request: one JSON object with exactly the parts the agent asked for. */
export function analysisMessages(settings: AnalysisSettings, transcript: string): LlmMessage[] {
  const keys: string[] = [];
  if (settings.summary)
    keys.push('"summary": a string, two or three sentences on what the call was about and how it ended');
  if (settings.structuredData)
    keys.push(
      `"structuredData": an object matching this JSON Schema (leave out what the call does not say): ${JSON.stringify(settings.structuredData.schema)}`,
    );
  if (settings.successCriteria)
    keys.push(
      `"success": {"success": true or false, "reason": one sentence} — whether the call met these criteria: ${settings.successCriteria}`,
    );
  return [
    {
      role: 'system',
      content:
        'You analyse a finished phone call between an AI agent and a caller. Answer with one JSON object and ' +
        `nothing else, with these keys:\n- ${keys.join('\n- ')}`,
    },
    { role: 'user', content: `The call's transcript:\n${transcript || '(nobody said anything)'}` },
  ];
}

/** The first `{` to the last `}`: models wrap JSON in prose or code fences despite being asked not to. */
function parseObject(text: string): Record<string, unknown> | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    const v = JSON.parse(text.slice(start, end + 1)) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Runs the analysis on the agent's LLM. Parts the model's answer lacks are left out; structured data that does not
 * match the schema is kept with `structuredDataError` saying why. An answer that is no JSON object is a failed
 * analysis (the text is not passed off as a summary).
 */
export async function llmAnalysis(
  engine: LlmEngine,
  req: { model: string; apiKey: string; settings: AnalysisSettings; transcript: string; signal: AbortSignal },
): Promise<{ result: Omit<CallAnalysis, 'engine' | 'analyzedAt'>; usage: LlmUsage }> {
  const out = await engine.complete({
    model: req.model,
    messages: analysisMessages(req.settings, req.transcript),
    temperature: 0,
    maxTokens: ANALYSIS_MAX_TOKENS,
    apiKey: req.apiKey,
    signal: req.signal,
  });
  const obj = parseObject(out.text);
  if (!obj)
    return { result: { status: 'failed', error: 'the model did not answer with a JSON object' }, usage: out.usage };
  const result: Omit<CallAnalysis, 'engine' | 'analyzedAt'> = { status: 'completed' };
  if (req.settings.summary && typeof obj.summary === 'string') result.summary = obj.summary.slice(0, 4000);
  const schema = req.settings.structuredData?.schema;
  const data = obj.structuredData;
  if (schema && data && typeof data === 'object' && !Array.isArray(data)) {
    result.structuredData = data as Record<string, unknown>;
    const problem = argumentProblem(schema, data);
    if (problem) result.structuredDataError = problem.replace(/^arguments do not match the tool's parameters: /, '');
  }
  const success = obj.success as { success?: unknown; reason?: unknown } | undefined;
  if (req.settings.successCriteria && success && typeof success.success === 'boolean')
    result.success = {
      success: success.success,
      reason: typeof success.reason === 'string' ? success.reason.slice(0, 1000) : '',
    };
  return { result, usage: out.usage };
}
