import { KNOWLEDGE_TOOL_NAME } from '../../../contracts/agents.ts';
import { ENTRY_HEADING_KEY } from '../../rag/entries.ts';
import { searchCollection } from '../../rag/search.ts';
import type { Infra } from '../../../platform/infra.ts';
import type { AgentToolHandler } from '../turn-runner.ts';

/** Passages returned to the model per search, and the similarity floor (hybrid scores, 0-1). */
export const KNOWLEDGE_RESULTS = 5;
export const KNOWLEDGE_THRESHOLD = 0.2;
/**
 * An FAQ entry below the threshold still answers when it clearly leads the other passages: within one FAQ the
 * entries compete, and a word the entry does not use ("toothache" for an entry on "severe tooth pain") scores low in
 * absolute terms but far above the rest (measured with the local embedder: 0.05 against at most 0.003, where an
 * unrelated question's best passage scores under 0.02 and close to its runner-up).
 */
const ENTRY_FLOOR = 0.02;
const ENTRY_LEAD = 5;

export interface KnowledgePassage {
  content: string;
  score: number;
  documentId: string;
  /** The entry's heading or question when its document was split by entries (`content` starts with it). */
  heading?: string;
}

export type KnowledgeSearch = (query: string, signal: AbortSignal) => Promise<KnowledgePassage[]>;

/**
 * Searches the agent's collection with the collections area's hybrid search. Not metered separately: the
 * search is part of the chat turn's `llm` charge.
 */
export function collectionSearch(
  infra: Infra,
  developerId: string,
  collectionId: string,
  requestId: string,
  headers: Record<string, string | string[] | undefined> = {},
): KnowledgeSearch {
  return async (query, signal) => {
    const out = await searchCollection(
      infra,
      collectionId,
      { query, limit: KNOWLEDGE_RESULTS, threshold: ENTRY_FLOOR, includeMetadata: true },
      { developerId, requestId, headers, signal, meter: false },
    );
    const [top, next] = out.results;
    const leads =
      top !== undefined &&
      typeof top.metadata?.[ENTRY_HEADING_KEY] === 'string' &&
      top.score >= (next?.score ?? 0) * ENTRY_LEAD;
    const kept = out.results.filter((r) => r.score >= KNOWLEDGE_THRESHOLD);
    return (kept.length ? kept : leads ? [top] : []).map((r) => {
      const heading = r.metadata?.[ENTRY_HEADING_KEY];
      return {
        content: r.content,
        score: r.score,
        documentId: r.documentId,
        ...(typeof heading === 'string' ? { heading } : {}),
      };
    });
  };
}

/**
 * The built-in knowledge tool: `search_knowledge({query})` searches the agent's attached collection and returns
 * the best passages as JSON `{results: [{content, score, documentId}]}` for the model to ground its answer on.
 */
export function knowledgeTool(
  infra: Infra,
  developerId: string,
  collectionId: string,
  requestId: string,
  headers: Record<string, string | string[] | undefined> = {},
  search: KnowledgeSearch = collectionSearch(infra, developerId, collectionId, requestId, headers),
): AgentToolHandler {
  return {
    definition: {
      name: KNOWLEDGE_TOOL_NAME,
      description:
        "Search the agent's knowledge base for passages relevant to a question. Use it before answering questions about facts, products, policies or anything the knowledge base may cover.",
      parameters: {
        type: 'object',
        properties: { query: { type: 'string', description: 'What to look up, as a short question or keywords.' } },
        required: ['query'],
      },
    },
    async execute(args, { signal }) {
      const query = (args as { query?: unknown })?.query;
      if (typeof query !== 'string' || !query.trim()) throw new Error('query must be a non-empty string');
      const results = await search(query.slice(0, 2000), signal);
      if (!results.length) return JSON.stringify({ results: [], note: 'nothing relevant found' });
      return JSON.stringify({
        results: results.map((r) => ({
          content: r.content,
          score: Math.round(r.score * 1000) / 1000,
          documentId: r.documentId,
        })),
      });
    },
  };
}
