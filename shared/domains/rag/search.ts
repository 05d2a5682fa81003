import type { Queryable } from '../../kernel/db/pool.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { Infra } from '../../platform/infra.ts';
import { getCollectionRow } from './collections.ts';
import { ragEngineError } from './errors.ts';
import { SearchBody, type SearchResultItem } from '../../contracts/rag.ts';
import { resolveProviderKey } from '../../platform/keys/provider-key.ts';
import { relevanceScore, weightsFor } from './score.ts';
import { toVectorSql } from './vector-literal.ts';
import { LocalSifEmbeddings } from '../../engines/embeddings/local-sif.ts';
import { tokenize } from '../../engines/embeddings/tokenize.ts';

/** Word weights from the local model's frequencies; every word weighs 1 where the model is not compiled. */
export function termWeights(infra: Pick<Infra, 'engines'>): (token: string) => number {
  const local = infra.engines.embeddings.get('default');
  if (!(local instanceof LocalSifEmbeddings)) return () => 1;
  try {
    local.load();
  } catch {
    return () => 1;
  }
  return (t) => local.wordWeight(t);
}

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

export interface CandidateRow {
  document_id: string;
  chunk_index: number;
  content: string;
  metadata: Record<string, unknown>;
  cos: number | null;
  /** Summed weight of the query's lexemes found in the chunk, and of all the query's lexemes. */
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
  const engine = infra.engines.embeddings.get(collection.embedding_provider);
  const key = await resolveProviderKey(infra, { engine, developerId: opts.developerId, headers: opts.headers });
  // A local embedder needs no key: it runs on the platform and is metered.
  const billable = key?.billable ?? true;
  const hold =
    opts.meter === false
      ? null
      : await infra.meter.reserve({
          developerId: opts.developerId,
          category: 'rag',
          units: 1,
          unit: 'queries',
          provider: engine.provider,
          billable,
          requestId: opts.requestId,
          operation: 'search',
        });
  try {
    const [vector] = await engine
      .embed([body.query], { apiKey: key?.key, signal: opts.signal, inputType: 'query' })
      .catch((e: unknown) => {
        throw ragEngineError(e, engine.provider);
      });
    const rows = await queryCandidates(infra.db, infra.config.RAG_HNSW_EF_SEARCH, opts.db, {
      collectionId: collection.id,
      dimension: collection.embedding_dimension,
      vector: vector!,
      query: body.query,
      limit: body.limit,
      filter: body.filter ?? null,
      termWeight: termWeights(infra),
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
    return { results, providerUsed: engine.provider, billable };
  } catch (e) {
    await hold?.refund();
    throw e;
  }
}

/** Most full-text matches ranked per search. */
const LEX_SCAN_CAP = 2000;

export interface CandidateQuery {
  collectionId: string;
  dimension: number;
  vector: Float32Array;
  query: string;
  limit: number;
  filter: Record<string, unknown> | null;
  /** Informativeness of a query word in 0-1 (SIF weight); full-text coverage is weighted by it. */
  termWeight(token: string): number;
  /** How many nearest neighbours and full-text hits to consider (defaults scale with limit). */
  vectorCandidates?: number;
  textCandidates?: number;
}

/**
 * The candidate chunks of a query with their two signals (cosine, lexeme coverage). Through `via` the query runs
 * as is (the caller's transaction, with its own settings); otherwise in a short transaction of its own with
 * hnsw.ef_search and iterative scans set.
 */
export async function queryCandidates(
  pool: Pick<Infra['db'], 'connect'>,
  efSearch: number,
  via: Queryable | undefined,
  q: CandidateQuery,
): Promise<CandidateRow[]> {
  const d = q.dimension;
  if (!Number.isInteger(d) || d < 1) throw new Error(`bad collection dimension ${d}`);
  const zero = q.vector.every((x) => x === 0);
  const vecK = zero ? 0 : (q.vectorCandidates ?? Math.max(2 * q.limit, 40));
  const lexK = q.textCandidates ?? Math.max(q.limit, 20);
  // `d` is an integer from our own row: the typmod must be a literal for the expression index to match.
  const sql = `
    with qt as (
      select l, max(t.w) as w
        from unnest($7::text[], $8::float8[]) as t(tok, w),
             unnest(tsvector_to_array(to_tsvector('english', t.tok))) as l
       group by l
    ),
    ql as (
      select coalesce(array_agg(quote_literal(l)::tsquery), '{}') as lq, coalesce(array_agg(w), '{}') as lw,
             coalesce(sum(w), 0) as total, plainto_tsquery('english', $4) as tq
        from qt
    ),
    vec as (
      select id from rag_chunks
       where collection_id = $1 and dimension = ${d} and ($6::jsonb is null or metadata @> $6::jsonb)
       order by embedding::vector(${d}) <=> $2::vector(${d})
       limit $3
    ),
    -- Full-text hits of all the query's terms, ranked. At most ${LEX_SCAN_CAP} matches are ranked: terms that common
    -- say little, and the cap keeps a one-common-word query from ranking a whole large collection.
    lex as (
      select m.id from (
        select c.id, c.tsv from rag_chunks c, ql
         where c.collection_id = $1 and ($6::jsonb is null or c.metadata @> $6::jsonb) and c.tsv @@ ql.tq
         limit ${LEX_SCAN_CAP}
      ) m, ql
       order by ts_rank_cd(m.tsv, ql.tq) desc
       limit $5
    )
    select c.document_id, c.chunk_index, c.content, c.metadata,
           1 - (c.embedding::vector(${d}) <=> $2::vector(${d})) as cos,
           (select coalesce(sum(x.w), 0) from unnest(ql.lq, ql.lw) as x(q, w) where c.tsv @@ x.q)::float8 as matched,
           ql.total::float8 as lexemes
      from rag_chunks c, ql
     where c.id in (select id from vec union select id from lex)`;
  const terms = [...new Set(tokenize(q.query))];
  const params = [
    q.collectionId,
    toVectorSql(q.vector),
    vecK,
    q.query,
    lexK,
    q.filter ? JSON.stringify(q.filter) : null,
    terms,
    terms.map((t) => q.termWeight(t)),
  ];
  // A named statement per dimension: parsed once per connection, and Postgres may settle on a generic plan.
  const statement = { name: `rag_candidates_v3_${d}`, text: sql, values: params };
  if (via) return (await via.query<CandidateRow>(statement)).rows;
  const client = await pool.connect();
  try {
    // One round trip for the transaction and its settings (a simple query may hold several statements).
    // Iterative scans keep filtered HNSW searches (one collection among many) returning enough rows.
    await client.query(
      `begin; set local hnsw.ef_search = ${Math.trunc(efSearch)}; set local hnsw.iterative_scan = relaxed_order`,
    );
    const { rows } = await client.query<CandidateRow>(statement);
    await client.query('commit');
    return rows;
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}
