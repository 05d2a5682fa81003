/** What a scripted LLM double answers to one request. */
export interface ScriptedReply {
  text?: string;
  toolCalls?: { name: string; arguments: unknown }[];
  usage?: { input: number; output: number };
  /** Answer with this HTTP status and body instead of a stream. */
  status?: number;
  errorBody?: unknown;
}

/** Decides the reply from the request body (already parsed) and its index among requests. */
export type LlmScript = (body: Record<string, unknown>, index: number) => ScriptedReply;
