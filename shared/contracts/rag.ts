import { z } from 'zod';
import { EMBEDDING_PROVIDERS } from './providers.ts';

/** Contract limit: ingested content (text, extracted page text or transcript) is at most 1 MB of UTF-8. */
export const MAX_INGEST_BYTES = 1024 * 1024;

const Metadata = z.record(z.string(), z.unknown());

export const CreateCollectionBody = z.object({
  name: z.string().min(1).max(100),
  description: z.string().max(500).optional(),
  metadata: Metadata.optional(),
  /** Extension: the embedder of this collection, fixed for its life. Defaults to the local `default` engine. */
  embeddingProvider: z.enum(EMBEDDING_PROVIDERS).optional(),
});
export type CreateCollectionBody = z.infer<typeof CreateCollectionBody>;

export const Collection = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  metadata: Metadata,
  createdAt: z.string(),
  embeddingProvider: z.string(),
  embeddingModel: z.string(),
  embeddingDimension: z.number(),
});
export type Collection = z.infer<typeof Collection>;

export const CollectionParams = z.object({ id: z.string().min(1).max(100) });
export const DocumentParams = z.object({
  collectionId: z.string().min(1).max(100),
  documentId: z.string().min(1).max(100),
});

export const INGEST_CONTENT_TYPES = ['text', 'transcript', 'audio', 'url'] as const;

/**
 * The size of `content` is checked in the service (413 beyond 1 MB of UTF-8), not here, so that an oversized
 * body answers 413 rather than 400.
 */
export const IngestBody = z
  .object({
    content: z.string().optional(),
    sourceUrl: z.string().max(2048).optional(),
    contentType: z.enum(INGEST_CONTENT_TYPES).default('text'),
    chunkSize: z.number().int().min(100).max(4000).default(1000),
    chunkOverlap: z.number().int().min(0).max(500).default(200),
    metadata: Metadata.optional(),
    /**
     * Extension (issue #33): `auto` splits a Markdown or Q&A text (two or more headings or `Q:` lines) into one chunk
     * per entry and other text by size; `entries` requires entries (400 when there are none); `size` always by size.
     */
    split: z.enum(['auto', 'entries', 'size']).default('auto'),
  })
  .superRefine((b, ctx) => {
    if (b.chunkOverlap >= b.chunkSize) {
      ctx.addIssue({ code: 'custom', path: ['chunkOverlap'], message: 'must be less than chunkSize' });
    }
  });
export type IngestBody = z.infer<typeof IngestBody>;

/** How a document was split into chunks: one per Markdown heading or Q&A question, or by size. */
export const DocumentSplit = z.enum(['entries', 'size']);

export const IngestResult = z.object({
  documentId: z.string(),
  chunksCreated: z.number(),
  tokensUsed: z.number(),
  /** Extension: how the document was split (`entries`: one chunk per heading or question; `size`: by chunkSize). */
  split: DocumentSplit.optional(),
});
export type IngestResult = z.infer<typeof IngestResult>;

export const SearchBody = z.object({
  query: z.string().min(1).max(2000),
  limit: z.number().int().min(1).max(100).default(10),
  threshold: z.number().min(0).max(1).default(0.7),
  includeMetadata: z.boolean().default(true),
  /** Extension: exact match on chunk metadata keys (all must match). */
  filter: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
});
export type SearchBody = z.infer<typeof SearchBody>;

export const SearchResultItem = z.object({
  content: z.string(),
  score: z.number(),
  metadata: Metadata.optional(),
  documentId: z.string(),
  chunkIndex: z.number(),
});
export type SearchResultItem = z.infer<typeof SearchResultItem>;

export const SearchResponse = z.object({ results: z.array(SearchResultItem) });
export type SearchResponse = z.infer<typeof SearchResponse>;
