import type { Queryable } from '../../kernel/db/pool.ts';
import type { EngineRegistry } from '../../engines/core/registry.ts';
import type { EmbeddingEngine } from '../../engines/embeddings/types.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { newId } from '../../kernel/ids.ts';
import { decodeCursor, toPage, type Page } from '../../kernel/pagination.ts';
import type { Collection, CreateCollectionBody } from '../../contracts/rag.ts';

export interface CollectionRow {
  id: string;
  developer_id: string;
  name: string;
  description: string;
  metadata: Record<string, unknown>;
  embedding_provider: string;
  embedding_model: string;
  embedding_dimension: number;
  created_at: Date;
}

export function toCollection(r: CollectionRow): Collection {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    metadata: r.metadata,
    createdAt: r.created_at.toISOString(),
    embeddingProvider: r.embedding_provider,
    embeddingModel: r.embedding_model,
    embeddingDimension: r.embedding_dimension,
  };
}

/**
 * Creates a collection with its embedder fixed (provider, model, dimension). Takes any Queryable so that agent
 * provisioning can create it inside its own transaction.
 */
export async function createCollection(
  db: Queryable,
  engines: EngineRegistry<EmbeddingEngine>,
  developerId: string,
  body: CreateCollectionBody,
): Promise<Collection> {
  const engine = engines.get(body.embeddingProvider ?? 'default');
  const { rows } = await db.query<CollectionRow>(
    `insert into rag_collections
       (id, developer_id, name, description, metadata, embedding_provider, embedding_model, embedding_dimension)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
    [
      newId('collection'),
      developerId,
      body.name,
      body.description ?? '',
      JSON.stringify(body.metadata ?? {}),
      engine.provider,
      engine.model,
      engine.dimension,
    ],
  );
  return toCollection(rows[0]!);
}

/** The developer's collection, or 404 (also for another developer's id: never 403). */
export async function getCollectionRow(
  db: Queryable,
  developerId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<CollectionRow> {
  const { rows } = await db.query<CollectionRow>(
    `select * from rag_collections where id = $1 and developer_id = $2${opts.forUpdate ? ' for update' : ''}`,
    [id, developerId],
  );
  if (!rows[0]) throw ApiError.notFound('collection', id);
  return rows[0];
}

export async function getCollection(db: Queryable, developerId: string, id: string): Promise<Collection> {
  return toCollection(await getCollectionRow(db, developerId, id));
}

export async function listCollections(
  db: Queryable,
  developerId: string,
  limit: number,
  cursor?: string,
): Promise<Page<Collection>> {
  const after = decodeCursor(cursor);
  const { rows } = await db.query<CollectionRow>(
    `select * from rag_collections where developer_id = $1 and ($2::text is null or id < $2)
     order by id desc limit $3`,
    [developerId, after, limit + 1],
  );
  return toPage(rows, limit, toCollection);
}

/** Deletes the collection; its documents and chunks go with it (foreign keys cascade). */
export async function deleteCollection(db: Queryable, developerId: string, id: string): Promise<void> {
  const { rowCount } = await db.query('delete from rag_collections where id = $1 and developer_id = $2', [
    id,
    developerId,
  ]);
  if (!rowCount) throw ApiError.notFound('collection', id);
}

/** Deletes one document and its chunks; 404 when the collection or the document is not the developer's. */
export async function deleteDocument(
  db: Queryable,
  developerId: string,
  collectionId: string,
  documentId: string,
): Promise<void> {
  await getCollectionRow(db, developerId, collectionId);
  const { rowCount } = await db.query(
    'delete from rag_documents where id = $1 and collection_id = $2 and developer_id = $3',
    [documentId, collectionId, developerId],
  );
  if (!rowCount) throw ApiError.notFound('document', documentId);
}

/** True when the collection exists and belongs to this developer (an agent may only attach its own). */
export async function collectionOwned(db: Queryable, developerId: string, collectionId: string): Promise<boolean> {
  const { rows } = await db.query('select 1 from rag_collections where developer_id = $1 and id = $2', [
    developerId,
    collectionId,
  ]);
  return rows.length > 0;
}

export interface DocumentListRow {
  id: string;
  content_type: string;
  source_url: string | null;
  metadata: Record<string, unknown>;
  char_count: number;
  chunk_count: number;
  split: 'entries' | 'size';
  created_at: Date;
}

/** A collection's documents, newest first (404 when the collection is not the developer's). */
export async function listDocuments(
  db: Queryable,
  developerId: string,
  collectionId: string,
  limit: number,
  cursor?: string,
): Promise<Page<DocumentListRow>> {
  await getCollectionRow(db, developerId, collectionId);
  const { rows } = await db.query<DocumentListRow>(
    `select id, content_type, source_url, metadata, char_count, chunk_count, split, created_at from rag_documents
      where collection_id = $1 and developer_id = $2 and ($3::text is null or id < $3)
      order by id desc limit $4`,
    [collectionId, developerId, decodeCursor(cursor), limit + 1],
  );
  return toPage(rows, limit, (r) => r);
}

/**
 * A collection's text in document and chunk order, at most `maxChars` characters (what an agent's speech
 * recogniser is biased to: the words its callers will ask about). Reads whole chunks until the cap is reached.
 */
export async function collectionText(db: Queryable, collectionId: string, maxChars: number): Promise<string> {
  const { rows } = await db.query<{ content: string }>(
    `select left(content, $2) as content from rag_chunks where collection_id = $1
      order by document_id, chunk_index limit 2000`,
    [collectionId, maxChars],
  );
  let text = '';
  for (const r of rows) {
    if (text.length >= maxChars) break;
    text += `${r.content}\n`;
  }
  return text.slice(0, maxChars);
}
