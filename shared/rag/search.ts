import type { Queryable } from '../db/pool.ts';
import { embeddingEngines } from '../engines/embeddings/registry.ts';
import { ApiError } from '../errors/api-error.ts';
import type { Infra } from '../runtime/infra.ts';
import { getCollectionRow } from './collections.ts';
import { SearchBody, type SearchResultItem } from './contracts.ts';
import { embedderKey } from './ingest.ts';
import { relevanceScore, weightsFor } from './score.ts';
import { toVectorLiteral } from './vector-literal.ts';

export interface SearchOptions {
  developerId: string;
  requestId: string;
  headers?: Record<string, string | string[] | undefined>;
  signal?: AbortSignal;
  /** Read through this connection (e.g. inside the caller's transaction) instead of the pool. */
  db?: Queryable;
  /** Skip credit metering (a caller that meters the whole operation itself, e.g. an agent turn). */
  meter?: boolean;
}

export interface SearchOutcome {
  results: SearchResultItem[];
  providerUsed: string;
  billable: boolean;
}

interface CandidateRow {
  document_id: string;
  chunk_index: number;
  content: string;
  metadata: Record<string, unknown>;
  cos: number | null;
  matched: number;
  lexemes: number;
}

/**
 * Hybrid search of one collection: candidates from the HNSW index (cosine) and from full-text search (all
 * query terms), each scored by relevanceScore (see score.ts), filtered by `threshold`, best first. 404 when
 * the collection is not the developer's. `body` takes the contract's fields (defaults applied here) and the
 * `filter` extension (exact match on chunk metadata keys).
 */
export async function searchCollection(
  infra: Infra,
  collectionId: string,
  rawBody: SearchBody | Record<string, unknown>,
  opts: SearchOptions,
): Promise<SearchOutcome> {
  const parsed = SearchBody.safeParse(rawBody);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.join('.');
    throw ApiError.validation(`${path ? `${path}: ` : ''}${issue.message}`, path || null);
  }
  const body = parsed.data;
  const collection = await getCollectionRow(opts.db ?? infra.db, opts.developerId, collectionId);
  const engine = embeddingEngines(infra).get(collection.embedding_provider);
  const key = await embedderKey(infra, engine, opts.developerId, opts.headers ?? {});
  const hold =
    opts.meter === false
      ? null
      : await infra.meter.reserve({
          developerId: opts.developerId,
          category: 'rag',
          units: 1,
          unit: 'queries',
          provider: engine.provider,
          billable: key.billable,
          requestId: opts.requestId,
          operation: 'search',
        });
  try {
    const [vector] = await engine.embed([body.query], { apiKey: key.apiKey, signal: opts.signal, inputType: 'query' });
    const rows = await queryCandidates(infra, opts.db, {
      collectionId: collection.id,
      dimension: collection.embedding_dimension,
      vector: vector!,
      query: body.query,
      limit: body.limit,
      filter: body.filter ?? null,
    });
    const w = weightsFor(engine.provider);
    const results = rows
      .map((r) => ({ r, score: relevanceScore(r.cos ?? 0, r.lexemes ? r.matched / r.lexemes : 0, w) }))
      .filter((x) => x.score >= body.threshold)
      .sort(
        (a, b) =>
          b.score - a.score || a.r.document_id.localeCompare(b.r.document_id) || a.r.chunk_index - b.r.chunk_index,
      )
      .slice(0, body.limit)
      .map(({ r, score }) => ({
        content: r.content,
        score,
        ...(body.includeMetadata ? { metadata: r.metadata } : {}),
        documentId: r.document_id,
        chunkIndex: r.chunk_index,
      }));
    await hold?.commit();
    return { results, providerUsed: engine.provider, billable: key.billable };
  } catch (e) {
    await hold?.refund().catch(() => {});
    throw e;
  }
}

interface CandidateQuery {
  collectionId: string;
  dimension: number;
  vector: Float32Array;
  query: string;
  limit: number;
  filter: Record<string, unknown> | null;
}

async function queryCandidates(infra: Infra, via: Queryable | undefined, q: CandidateQuery): Promise<CandidateRow[]> {
  const d = q.dimension;
  if (!Number.isInteger(d) || d < 1) throw new Error(`bad collection dimension ${d}`);
  const zero = q.vector.every((x) => x === 0);
  const vecK = zero ? 0 : Math.max(2 * q.limit, 40);
  const lexK = Math.max(q.limit, 20);
  // `d` is an integer from our own row: the typmod must be a literal for the expression index to match.
  const sql = `
    with ql as (select tsvector_to_array(to_tsvector('english', $4)) as lx, plainto_tsquery('english', $4) as tq),
    vec as (
      select id from rag_chunks
       where collection_id = $1 and dimension = ${d} and ($6::jsonb is null or metadata @> $6::jsonb)
       order by embedding::vector(${d}) <=> $2::vector(${d})
       limit $3
    ),
    lex as (
      select c.id from rag_chunks c, ql
       where c.collection_id = $1 and ($6::jsonb is null or c.metadata @> $6::jsonb) and c.tsv @@ ql.tq
       order by ts_rank_cd(c.tsv, ql.tq) desc
       limit $5
    )
    select c.document_id, c.chunk_index, c.content, c.metadata,
           1 - (c.embedding::vector(${d}) <=> $2::vector(${d})) as cos,
           (select count(*) from unnest(ql.lx) l where l = any(tsvector_to_array(c.tsv)))::int as matched,
           cardinality(ql.lx) as lexemes
      from rag_chunks c, ql
     where c.id in (select id from vec union select id from lex)`;
  const params = [
    q.collectionId,
    toVectorLiteral(q.vector),
    vecK,
    q.query,
    lexK,
    q.filter ? JSON.stringify(q.filter) : null,
  ];
  if (via) return (await via.query<CandidateRow>(sql, params)).rows;
  const client = await infra.db.connect();
  try {
    await client.query('begin');
    // Iterative scans keep filtered HNSW searches (one collection among many) returning enough rows.
    await client.query(`set local hnsw.ef_search = ${infra.config.RAG_HNSW_EF_SEARCH}`);
    await client.query(`set local hnsw.iterative_scan = relaxed_order`);
    const { rows } = await client.query<CandidateRow>(sql, params);
    await client.query('commit');
    return rows;
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}
