import type { Reservation } from '../../platform/metering/types.ts';
import { withTransaction, type Queryable } from '../../kernel/db/pool.ts';
import { resolveProviderKey } from '../../platform/keys/provider-key.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { newId } from '../../kernel/ids.ts';
import type { Infra } from '../../platform/infra.ts';
import { chunkText, normalizeText, type Chunk } from './chunker.ts';
import { ENTRY_HEADING_KEY, splitEntries } from './entries.ts';
import { ragEngineError } from './errors.ts';
import { getCollectionRow, type CollectionRow } from './collections.ts';
import { IngestBody, type IngestResult } from '../../contracts/rag.ts';
import { loadContent, timesFor } from './sources.ts';
import { toVectorSql } from './vector-literal.ts';

export interface IngestOptions {
  developerId: string;
  /** Ties the credit charge to the request (X-Request-Id) or job that caused it. */
  requestId: string;
  /** Incoming request headers (lower-cased) for `X-Provider-Key-*`; {} for work with no request. */
  headers?: Record<string, string | string[] | undefined>;
  signal?: AbortSignal;
  /**
   * Run the writes on this connection instead of a transaction of ingest's own: pass the client of an open
   * transaction (agent provisioning) and the document commits or rolls back with the caller's work.
   */
  db?: Queryable;
  /**
   * With `db` (the caller's transaction): the credit holds are handed to the caller instead of settled here,
   * because the transaction may still roll back. The caller commits them after its transaction commits and
   * refunds them if it does not, so a rolled-back document is never charged.
   */
  settleLater?: Reservation[];
}

export interface IngestOutcome extends IngestResult {
  /** The embedder that served the request (X-Provider-Used). */
  providerUsed: string;
  /** False when the caller's own provider key was used (X-Usage-Bypassed). */
  billable: boolean;
}

/**
 * Ingests one document: resolves its text (given, fetched page, or audio transcript), chunks it, embeds the
 * chunks with the collection's embedder and stores document and chunks. Meters `ingest` (rag) credits by the
 * tokens embedded, and `transcribe` (stt) by audio seconds for audio. 404 when the collection is not the
 * developer's. Callable outside HTTP: `body` is parsed here with the contract's schema (defaults applied).
 */
export async function ingestDocument(
  infra: Infra,
  collectionId: string,
  rawBody: IngestBody | Record<string, unknown>,
  opts: IngestOptions,
): Promise<IngestOutcome> {
  const parsed = IngestBody.safeParse(rawBody);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.join('.');
    throw ApiError.validation(`${path ? `${path}: ` : ''}${issue.message}`, path || null);
  }
  const body = parsed.data;
  const db = opts.db ?? infra.db;
  const collection = await getCollectionRow(db, opts.developerId, collectionId);
  const engine = infra.engines.embeddings.get(collection.embedding_provider);

  const content = await loadContent(infra, body, opts.signal);
  const { chunks, split, headings } = splitDocument(content.text, body);
  if (chunks.length === 0) throw ApiError.validation('the content has no text to ingest', 'content');

  const key = await resolveProviderKey(infra, { engine, developerId: opts.developerId, headers: opts.headers });
  // A local embedder needs no key: it runs on the platform and is metered.
  const billable = key?.billable ?? true;
  const tokens = chunks.reduce((n, c) => n + engine.countTokens(c.content), 0);
  const holds: Reservation[] = [];
  try {
    if (content.audioSeconds > 0) {
      holds.push(
        await infra.meter.reserve({
          developerId: opts.developerId,
          category: 'stt',
          units: content.audioSeconds,
          unit: 'audio seconds',
          provider: 'default',
          billable: true,
          requestId: opts.requestId,
          operation: 'transcribe',
        }),
      );
    }
    holds.push(
      await infra.meter.reserve({
        developerId: opts.developerId,
        category: 'rag',
        units: tokens,
        unit: 'embedded tokens',
        provider: engine.provider,
        billable,
        requestId: opts.requestId,
        operation: 'ingest',
      }),
    );
    const vectors = await engine
      .embed(
        chunks.map((c) => c.content),
        { apiKey: key?.key, signal: opts.signal, inputType: 'document' },
      )
      .catch((e: unknown) => {
        throw ragEngineError(e, engine.provider);
      });
    const userMeta = body.metadata ?? {};
    const documentId = newId('document');
    const write = (q: Queryable) =>
      insertDocument(q, {
        documentId,
        collection,
        developerId: opts.developerId,
        contentType: body.contentType,
        sourceUrl: content.sourceUrl,
        metadata: userMeta,
        charCount: content.text.length,
        tokens,
        chunks,
        vectors,
        split,
        chunkMetadata: (c) => ({
          ...content.metadata,
          ...(headings.has(c.index) ? { [ENTRY_HEADING_KEY]: headings.get(c.index)! } : {}),
          ...(content.timeline ? timesFor(content.timeline, c.start, c.end) : {}),
          ...userMeta,
        }),
      });
    if (opts.db) await write(opts.db);
    else await withTransaction(infra.db, write);
    if (opts.settleLater) opts.settleLater.push(...holds.splice(0));
    else for (const h of holds) await h.commit();
    return {
      documentId,
      chunksCreated: chunks.length,
      tokensUsed: tokens,
      split,
      providerUsed: engine.provider,
      billable,
    };
  } catch (e) {
    for (const h of holds) await h.refund();
    throw e;
  }
}

/**
 * The document's chunks: one per Markdown heading or Q&A question (`heading` + blank line + its text, the text split
 * by size only when it alone passes chunkSize), or by size. `headings` names each entry chunk's heading.
 */
function splitDocument(
  text: string,
  body: { contentType: string; split: 'auto' | 'entries' | 'size'; chunkSize: number; chunkOverlap: number },
): { chunks: Chunk[]; split: 'entries' | 'size'; headings: Map<number, string> } {
  const headings = new Map<number, string>();
  const entries = body.split !== 'size' && body.contentType === 'text' ? splitEntries(normalizeText(text)) : null;
  if (!entries) {
    if (body.split === 'entries')
      throw ApiError.validation('split: the content has no Markdown headings or Q&A questions to split by', 'split');
    return { chunks: chunkText(text, body), split: 'size', headings };
  }
  const chunks: Chunk[] = [];
  for (const e of entries) {
    const room = Math.max(100, body.chunkSize - e.heading.length - 2);
    const parts =
      e.answer.length <= room
        ? [e.answer]
        : chunkText(e.answer, {
            chunkSize: room,
            chunkOverlap: Math.min(body.chunkOverlap, room - 1),
          }).map((c) => c.content);
    for (const part of parts) {
      headings.set(chunks.length, e.heading);
      chunks.push({ index: chunks.length, content: `${e.heading}\n\n${part}`, start: e.start, end: e.end });
    }
  }
  return { chunks, split: 'entries', headings };
}

export interface DocumentWrite {
  documentId: string;
  collection: CollectionRow;
  developerId: string;
  contentType: string;
  sourceUrl: string | null;
  metadata: Record<string, unknown>;
  charCount: number;
  tokens: number;
  chunks: Chunk[];
  /** How the chunks were made (one per entry, or by size). */
  split?: 'entries' | 'size';
  vectors: Float32Array[];
  chunkMetadata(c: Chunk): Record<string, unknown>;
}

/** Rows per INSERT: bounds the size of one statement's parameters for a 10,000-chunk document. */
const INSERT_BATCH = 500;

/** Writes a document row and its chunk rows (with vectors) through `db`; no transaction of its own. */
export async function insertDocument(db: Queryable, w: DocumentWrite): Promise<void> {
  // The collection row is locked so that a concurrent DELETE of the collection cannot interleave; if the DELETE
  // won while this document was being embedded, the answer is the 404 a later request would get.
  const { rowCount } = await db.query('select 1 from rag_collections where id = $1 for share', [w.collection.id]);
  if (!rowCount) throw ApiError.notFound('collection', w.collection.id);
  await db.query(
    `insert into rag_documents
       (id, collection_id, developer_id, content_type, source_url, metadata, char_count, chunk_count, tokens_used,
        split)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      w.documentId,
      w.collection.id,
      w.developerId,
      w.contentType,
      w.sourceUrl,
      JSON.stringify(w.metadata),
      w.charCount,
      w.chunks.length,
      w.tokens,
      w.split ?? 'size',
    ],
  );
  for (let i = 0; i < w.chunks.length; i += INSERT_BATCH) {
    const batch = w.chunks.slice(i, i + INSERT_BATCH);
    await db.query(
      `insert into rag_chunks (collection_id, document_id, chunk_index, content, metadata, dimension, embedding)
       select $1, $2, t.idx, t.content, t.meta, $3, t.emb::vector
         from unnest($4::int[], $5::text[], $6::jsonb[], $7::text[]) as t(idx, content, meta, emb)`,
      [
        w.collection.id,
        w.documentId,
        w.collection.embedding_dimension,
        batch.map((c) => c.index),
        batch.map((c) => c.content),
        batch.map((c) => JSON.stringify(w.chunkMetadata(c))),
        batch.map((c) => toVectorSql(w.vectors[c.index]!)),
      ],
    );
  }
}
