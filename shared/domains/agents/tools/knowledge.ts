import { KNOWLEDGE_TOOL_NAME } from '../../../kernel/contracts/agents.ts';
import { searchCollection } from '../../rag/search.ts';
import type { Infra } from '../../../platform/infra.ts';
import type { AgentToolHandler } from '../turn-runner.ts';

/** Passages returned to the model per search, and the similarity floor (hybrid scores, 0-1). */
export const KNOWLEDGE_RESULTS = 5;
export const KNOWLEDGE_THRESHOLD = 0.2;

export interface KnowledgePassage {
  content: string;
  score: number;
  documentId: string;
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
      { query, limit: KNOWLEDGE_RESULTS, threshold: KNOWLEDGE_THRESHOLD, includeMetadata: false },
      { developerId, requestId, headers, signal, meter: false },
    );
    return out.results.map((r) => ({ content: r.content, score: r.score, documentId: r.documentId }));
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
