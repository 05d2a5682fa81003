/**
 * Collections benchmark: model load, ingest throughput, hybrid search latency at 10k and 100k chunks, and HNSW
 * recall@10 against exact search. Runs against a scratch database of its own on the local Postgres.
 *
 *   npm run bench:rag                 # 10k and 100k chunks
 *   npm run bench:rag -- --sizes 10000
 *
 * Targets (issue 5): search p95 ≤ 15 ms at 100k chunks, recall@10 ≥ 0.95, 1 MB ingest ≤ 5 s.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { buildEngines } from '../../shared/engines/engines.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { withTransaction, type Db } from '../../shared/kernel/db/pool.ts';
import { LocalSifEmbeddings } from '../../shared/engines/embeddings/local-sif.ts';
import { localModelPath } from '../../shared/engines/embeddings/registry.ts';
import { chunkText } from '../../shared/domains/rag/chunker.ts';
import type { CollectionRow } from '../../shared/domains/rag/collections.ts';
import { insertDocument } from '../../shared/domains/rag/ingest.ts';
import { LOCAL_WEIGHTS, relevanceScore } from '../../shared/domains/rag/score.ts';
import { queryCandidates, termWeights } from '../../shared/domains/rag/search.ts';
import { toVectorSql } from '../../shared/domains/rag/vector-literal.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { addDocument, loadRetrievalSet, newCollection, scratchDatabase } from './corpus.ts';
import { mulberry32 } from '../../shared/kernel/prng.ts';

const args = process.argv.slice(2);
const sizesArg = args[args.indexOf('--sizes') + 1];
const QUICK = args.includes('--quick');
const opt = (name: string, dflt: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : dflt);
/** `topical` (default): chunks drawn from 1,000 topic vocabularies, like documents; `uniform`: bags of random words. */
const DATA = opt('--data', 'topical');
const HNSW_M = Number(opt('--m', '24'));
const HNSW_EF_CONSTRUCTION = Number(opt('--ef-construction', '100'));
const SIZES = args.includes('--sizes') && sizesArg ? sizesArg.split(',').map(Number) : [10_000, 100_000];
const EF_SEARCH = loadConfig().RAG_HNSW_EF_SEARCH;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function main() {
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(1))
      .join(' ');
  console.log(`machine: ${cpus().length} cores, load average ${load()} (timings scale with contention)`);
  console.log(
    `synthetic data: ${DATA}; HNSW m ${HNSW_M}, ef_construction ${HNSW_EF_CONSTRUCTION}; ef_search ${EF_SEARCH}`,
  );
  // 1. Model load (first thing in the process, so RSS growth is the model's).
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const engine = new LocalSifEmbeddings({ modelPath: localModelPath(loadConfig()) });
  engine.load();
  const loadMs = performance.now() - t0;
  const modelMb = (process.memoryUsage().rss - rss0) / 1024 / 1024;
  console.log(
    `model load: ${ms(loadMs)}, +${modelMb.toFixed(0)} MB RSS (process RSS ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB)`,
  );

  const { db, close } = await scratchDatabase('vap_rag_bench');
  try {
    const { developerId, collection } = await newCollection(db);

    // 2. Ingest throughput: 1 MB of prose, default chunking, through chunk → embed → insert (one transaction).
    const set = loadRetrievalSet();
    const prose = set.documents.map((d) => `${d.title}\n\n${d.text}`).join('\n\n');
    const mb = 1024 * 1024;
    const text = prose.repeat(Math.ceil(mb / prose.length)).slice(0, mb);
    const ingestCol = await newCollection(db);
    const tIngest = performance.now();
    const phases = await ingestOnce(db, engine, ingestCol.collection, ingestCol.developerId, text);
    const ingestMs = performance.now() - tIngest;
    console.log(
      `ingest 1 MB (${phases.chunks} chunks of ≤1000 chars, overlap 200): ${(ingestMs / 1000).toFixed(2)} s ` +
        `= ${Math.round(text.length / (ingestMs / 1000)).toLocaleString('en')} chars/s ` +
        `(chunk ${ms(phases.chunk)}, embed ${ms(phases.embed)}, write ${ms(phases.write)})  target ≤ 5 s`,
    );

    // 3. The retrieval set goes into the big collection so that searches have real answers in it.
    for (const d of set.documents)
      await addDocument(db, engine, collection, developerId, `${d.title}\n\n${d.text}`, {});
    const queries = [...set.questions.map((q) => q.question), ...set.unrelated];
    let have = Number(
      (await db.query('select count(*) from rag_chunks where collection_id = $1', [collection.id])).rows[0].count,
    );
    const weigh = termWeights({ engines: buildEngines(loadConfig()) });

    for (const size of SIZES) {
      const tLoad = performance.now();
      have = await fillTo(db, engine, collection, developerId, have, size);
      console.log(
        `\n== ${size.toLocaleString('en')} chunks in the collection (loaded + indexed in ${((performance.now() - tLoad) / 1000).toFixed(0)} s)`,
      );
      await db.query('vacuum analyze rag_chunks');

      // Search latency: embed the query + hybrid SQL + scoring, as the API's search does (no HTTP, no metering).
      const lat: number[] = [];
      let cpu0: { client: NodeJS.CpuUsage; backend: number } | null = null;
      for (let round = 0; round < (QUICK ? 2 : 4); round++) {
        if (round === 1) cpu0 = { client: process.cpuUsage(), backend: await backendCpuMs(db) };
        for (const q of queries) {
          const t = performance.now();
          const [v] = await engine.embed([q], { inputType: 'query' });
          const rows = await queryCandidates(db, EF_SEARCH, undefined, {
            collectionId: collection.id,
            dimension: 100,
            vector: v!,
            query: q,
            limit: 10,
            filter: null,
            termWeight: weigh,
          });
          rows.map((r) => relevanceScore(r.cos ?? 0, r.lexemes ? r.matched / r.lexemes : 0, LOCAL_WEIGHTS));
          if (round > 0) lat.push(performance.now() - t); // round 0 warms caches
        }
      }
      const client = process.cpuUsage(cpu0!.client);
      const backend = (await backendCpuMs(db)) - cpu0!.backend;
      const cpuPerQuery = ((client.user + client.system) / 1000 + backend) / lat.length;
      console.log(
        `hybrid search (limit 10, ${lat.length} queries): p50 ${ms(pct(lat, 0.5))}, p95 ${ms(pct(lat, 0.95))}, ` +
          `p99 ${ms(pct(lat, 0.99))}  target p95 ≤ 15 ms at 100k\n` +
          `  CPU per search, client + Postgres backend (what an idle core would take, independent of load): ` +
          `${ms(cpuPerQuery)} mean (${ms((client.user + client.system) / 1000 / lat.length)} client, ` +
          `${ms(backend / lat.length)} Postgres)`,
      );

      // HNSW recall@10 against exact (sequential) search, vector part only, at several ef_search values.
      const exactTop = new Map<string, string[]>();
      for (const q of queries) {
        const [v] = await engine.embed([q], { inputType: 'query' });
        exactTop.set(q, await vectorTop10(db, collection.id, toVectorSql(v!), null));
      }
      for (const ef of QUICK ? [EF_SEARCH] : [...new Set([40, EF_SEARCH, 200, 400])].sort((a, b) => a - b)) {
        let hit = 0;
        let hit40 = 0;
        let total = 0;
        const annLat: number[] = [];
        for (const q of queries) {
          const [v] = await engine.embed([q], { inputType: 'query' });
          const t = performance.now();
          const ann = new Set(await vectorTop10(db, collection.id, toVectorSql(v!), ef));
          annLat.push(performance.now() - t);
          const exact = exactTop.get(q)!;
          hit += exact.filter((id) => ann.has(id)).length;
          total += exact.length;
          const cand = new Set(await vectorTop10(db, collection.id, toVectorSql(v!), ef, 40));
          hit40 += exact.filter((id) => cand.has(id)).length;
        }
        console.log(
          `HNSW recall@10 vs exact, ef_search ${ef}${ef === EF_SEARCH ? ' (configured)' : ''}: ${(hit / total).toFixed(3)}; ` +
            `exact top 10 among the 40 candidates search re-scores: ${(hit40 / total).toFixed(3)}; ` +
            `vector-only query p50 ${ms(pct(annLat, 0.5))}, p95 ${ms(pct(annLat, 0.95))}  target ≥ 0.95`,
        );
      }
    }
  } finally {
    await close();
  }
}

async function ingestOnce(
  db: Db,
  engine: LocalSifEmbeddings,
  collection: CollectionRow,
  developerId: string,
  text: string,
) {
  let t = performance.now();
  const chunks = chunkText(text, { chunkSize: 1000, chunkOverlap: 200 });
  const chunk = performance.now() - t;
  t = performance.now();
  const vectors = await engine.embed(chunks.map((c) => c.content));
  const embed = performance.now() - t;
  t = performance.now();
  await withTransaction(db, (tx) =>
    insertDocument(tx, {
      documentId: newId('document'),
      collection,
      developerId,
      contentType: 'text',
      sourceUrl: null,
      metadata: {},
      charCount: text.length,
      tokens: 0,
      chunks,
      vectors,
      chunkMetadata: () => ({}),
    }),
  );
  return { chunks: chunks.length, chunk, embed, write: performance.now() - t };
}

/**
 * CPU time used so far by this database's Postgres backends (utime + stime from /proc, 10 ms ticks), so that the
 * work per search can be told apart from time spent waiting for a core on a busy machine. 0 where /proc is not
 * readable (Postgres on another host).
 */
async function backendCpuMs(db: Db): Promise<number> {
  const { rows } = await db.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database()',
  );
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of the line)
    } catch {
      // not local, or the backend just exited
    }
  }
  return ticks * 10;
}

/** Top 10 chunk ids by cosine: through the HNSW index at `ef` ef_search, or (null) an exact scan. */
async function vectorTop10(db: Db, collectionId: string, lit: string, ef: number | null, k = 10): Promise<string[]> {
  const client = await db.connect();
  try {
    await client.query('begin');
    await client.query(`set local hnsw.ef_search = ${ef ?? 40}`);
    await client.query('set local hnsw.iterative_scan = relaxed_order');
    if (ef === null) await client.query('set local enable_indexscan = off');
    const { rows } = await client.query<{ id: string }>(
      `select id from rag_chunks where collection_id = $1 and dimension = 100
        order by embedding::vector(100) <=> $2::vector(100) limit ${k}`,
      [collectionId, lit],
    );
    await client.query('commit');
    return rows.map((r) => String(r.id));
  } finally {
    client.release();
  }
}

/**
 * Synthetic chunks up to `target`: 40-120 words drawn from the vocabulary's 30,000 most frequent words with a
 * Zipf-like bias, embedded with the real engine. Rows are bulk-inserted with the HNSW index dropped and the index
 * is rebuilt afterwards (what a bulk load does; per-row HNSW inserts are what the ingest figure above measures).
 */
async function fillTo(
  db: Db,
  engine: LocalSifEmbeddings,
  collection: CollectionRow,
  developerId: string,
  have: number,
  target: number,
) {
  if (have >= target) return have;
  const words = engine
    .load()
    .words.slice(100, 30_100)
    .filter((w) => /^[a-z]+$/.test(w));
  const rand = mulberry32(42 + have);
  // Topics: 1,000 vocabularies of 150 words each (fixed seed), so chunks cluster the way documents on a subject do.
  const topicRand = mulberry32(7);
  const topics = Array.from({ length: 1000 }, () =>
    Array.from({ length: 150 }, () => words[Math.floor(words.length * topicRand() ** 1.5)]!),
  );
  await db.query('drop index if exists rag_chunks_hnsw_100');
  const documentId = newId('document');
  await db.query(
    `insert into rag_documents (id, collection_id, developer_id, content_type, metadata, char_count, chunk_count, tokens_used)
     values ($1, $2, $3, 'text', '{}', 0, 0, 0)`,
    [documentId, collection.id, developerId],
  );
  const BATCH = 2000;
  for (let start = have; start < target; start += BATCH) {
    const n = Math.min(BATCH, target - start);
    const general = () => words[Math.floor(words.length * rand() ** 2)]!;
    const texts = Array.from({ length: n }, () => {
      const len = 40 + Math.floor(rand() * 80);
      const topic = topics[Math.floor(rand() * topics.length)]!;
      return (
        Array.from({ length: len }, () =>
          DATA === 'topical' && rand() < 0.7 ? topic[Math.floor(rand() * topic.length)]! : general(),
        ).join(' ') + '.'
      );
    });
    const vectors = await engine.embed(texts);
    await db.query(
      `insert into rag_chunks (collection_id, document_id, chunk_index, content, metadata, dimension, embedding)
       select $1, $2, t.idx, t.content, '{}', 100, t.emb::vector
         from unnest($3::int[], $4::text[], $5::text[]) as t(idx, content, emb)`,
      [collection.id, documentId, texts.map((_, i) => start + i), texts, vectors.map(toVectorSql)],
    );
  }
  await db.query(`set maintenance_work_mem = '512MB'`);
  await db.query(
    `create index rag_chunks_hnsw_100 on rag_chunks using hnsw ((embedding::vector(100)) vector_cosine_ops)
      with (m = ${HNSW_M}, ef_construction = ${HNSW_EF_CONSTRUCTION}) where dimension = 100`,
  );
  return target;
}

await main();
