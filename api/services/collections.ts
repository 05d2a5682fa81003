import type { FastifyReply, FastifyRequest } from 'fastify';
import type {
  Collection,
  CreateCollectionBody,
  IngestBody,
  IngestResult,
  SearchBody,
  SearchResponse,
} from '../../shared/contracts/rag.ts';
import { createCollection } from '../../shared/domains/rag/collections.ts';
import { ingestDocument } from '../../shared/domains/rag/ingest.ts';
import { searchCollection } from '../../shared/domains/rag/search.ts';

export {
  deleteCollection,
  deleteDocument,
  getCollection,
  listCollections,
} from '../../shared/domains/rag/collections.ts';

/** The collection's embedder is chosen (and validated) from the registry at creation. */
export function createForRequest(req: FastifyRequest, body: CreateCollectionBody): Promise<Collection> {
  const { infra } = req.server;
  return createCollection(infra.db, infra.engines.embeddings, req.auth.developerId, body);
}

/** Ingest with the request's keys, id and cancellation; marks X-Provider-Used / X-Usage-Bypassed. */
export async function ingestForRequest(
  req: FastifyRequest,
  reply: FastifyReply,
  collectionId: string,
  body: IngestBody,
): Promise<IngestResult> {
  const out = await ingestDocument(req.server.infra, collectionId, body, {
    developerId: req.auth.developerId,
    requestId: req.id,
    headers: req.headers,
    signal: requestSignal(reply),
  });
  req.providerUsed = out.providerUsed;
  req.usageBypassed = !out.billable;
  return {
    documentId: out.documentId,
    chunksCreated: out.chunksCreated,
    tokensUsed: out.tokensUsed,
    ...(out.split ? { split: out.split } : {}),
  };
}

export async function searchForRequest(
  req: FastifyRequest,
  reply: FastifyReply,
  collectionId: string,
  body: SearchBody,
): Promise<SearchResponse> {
  const out = await searchCollection(req.server.infra, collectionId, body, {
    developerId: req.auth.developerId,
    requestId: req.id,
    headers: req.headers,
    signal: requestSignal(reply),
  });
  req.providerUsed = out.providerUsed;
  req.usageBypassed = !out.billable;
  return { results: out.results };
}

/** Aborts when the client goes away before its response is sent (embedding, fetching, transcribing stop). */
function requestSignal(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}
