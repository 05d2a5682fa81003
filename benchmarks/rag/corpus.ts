import { readFileSync } from 'node:fs';
import pg from 'pg';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { migrate } from '../../shared/kernel/db/migrate.ts';
import { createDb, type Db } from '../../shared/kernel/db/pool.ts';
import { newId } from '../../shared/kernel/ids.ts';
import { buildEmbeddingRegistry } from '../../shared/engines/embeddings/registry.ts';
import type { EmbeddingEngine } from '../../shared/engines/embeddings/types.ts';
import { chunkText } from '../../shared/domains/rag/chunker.ts';
import { createCollection, getCollectionRow, type CollectionRow } from '../../shared/domains/rag/collections.ts';
import { insertDocument } from '../../shared/domains/rag/ingest.ts';

export interface RetrievalSet {
  documents: { id: string; title: string; text: string }[];
  questions: { question: string; documentId: string }[];
  unrelated: string[];
}

export function loadRetrievalSet(): RetrievalSet {
  return JSON.parse(
    readFileSync(new URL('../../test/fixtures/rag/retrieval-set.json', import.meta.url), 'utf8'),
  ) as RetrievalSet;
}

const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://vap:vap@127.0.0.1:5432/postgres';

/** A fresh, migrated database for a benchmark run (dropped by the returned close). */
export async function scratchDatabase(name: string): Promise<{ db: Db; close(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  const db = createDb(u.toString(), 4);
  await migrate(db);
  return {
    db,
    async close() {
      await db.end();
      // BENCH_KEEP_DB=1 leaves the database for inspection (EXPLAIN ANALYZE …); the next run replaces it.
      if (!process.env.BENCH_KEEP_DB) await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

export function localEngine(): EmbeddingEngine {
  return buildEmbeddingRegistry(loadConfig()).get('default');
}

/** A developer and an empty collection embedded with the local engine. */
export async function newCollection(db: Db): Promise<{ developerId: string; collection: CollectionRow }> {
  const developerId = newId('developer');
  await db.query(`insert into developers (id, name) values ($1, 'bench')`, [developerId]);
  const c = await createCollection(db, buildEmbeddingRegistry(loadConfig()), developerId, { name: 'bench' });
  return { developerId, collection: await getCollectionRow(db, developerId, c.id) };
}

/** Chunks, embeds and stores one document directly (the ingest path without HTTP and metering). */
export async function addDocument(
  db: Db,
  engine: EmbeddingEngine,
  collection: CollectionRow,
  developerId: string,
  text: string,
  metadata: Record<string, unknown>,
  chunkSize = 1000,
  chunkOverlap = 200,
): Promise<string> {
  const chunks = chunkText(text, { chunkSize, chunkOverlap });
  const vectors = await engine.embed(chunks.map((c) => c.content));
  const documentId = newId('document');
  await insertDocument(db, {
    documentId,
    collection,
    developerId,
    contentType: 'text',
    sourceUrl: null,
    metadata,
    charCount: text.length,
    tokens: 0,
    chunks,
    vectors,
    chunkMetadata: () => metadata,
  });
  return documentId;
}
