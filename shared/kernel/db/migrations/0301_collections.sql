-- Collections: documents split into chunks, each chunk embedded (pgvector) and indexed for full-text search.

create table rag_collections (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  name text not null check (char_length(name) between 1 and 100),
  description text not null default '' check (char_length(description) <= 500),
  metadata jsonb not null default '{}',
  -- The embedder is fixed for the collection's life: vectors of different models are not comparable.
  embedding_provider text not null,
  embedding_model text not null,
  embedding_dimension int not null check (embedding_dimension between 1 and 16000),
  created_at timestamptz not null default now()
);
create index rag_collections_developer on rag_collections (developer_id, id desc);

create table rag_documents (
  id text primary key,
  collection_id text not null references rag_collections(id) on delete cascade,
  developer_id text not null,
  content_type text not null check (content_type in ('text', 'transcript', 'audio', 'url')),
  source_url text,
  metadata jsonb not null default '{}',
  char_count int not null,
  chunk_count int not null,
  tokens_used int not null,
  created_at timestamptz not null default now()
);
create index rag_documents_collection on rag_documents (collection_id, id desc);

-- One table for every embedder: `embedding` is a `vector` without a fixed size and `dimension` records it. Each
-- common size gets a partial HNSW index on the expression embedding::vector(N); a search orders by that same
-- expression with `dimension = N` so the planner can use it. Sizes without an index are searched exactly
-- (per collection, through rag_chunks_collection), which is fine for the collection sizes such models serve.
create table rag_chunks (
  id bigint generated always as identity primary key,
  collection_id text not null references rag_collections(id) on delete cascade,
  document_id text not null references rag_documents(id) on delete cascade,
  chunk_index int not null,
  content text not null,
  metadata jsonb not null default '{}',
  dimension int not null,
  embedding vector not null,
  tsv tsvector generated always as (to_tsvector('english', content)) stored,
  unique (document_id, chunk_index)
);
create index rag_chunks_collection on rag_chunks (collection_id);
create index rag_chunks_tsv on rag_chunks using gin (tsv);
create index rag_chunks_metadata on rag_chunks using gin (metadata jsonb_path_ops);
create index rag_chunks_hnsw_100 on rag_chunks using hnsw ((embedding::vector(100)) vector_cosine_ops)
  where dimension = 100;
create index rag_chunks_hnsw_384 on rag_chunks using hnsw ((embedding::vector(384)) vector_cosine_ops)
  where dimension = 384;
create index rag_chunks_hnsw_512 on rag_chunks using hnsw ((embedding::vector(512)) vector_cosine_ops)
  where dimension = 512;
create index rag_chunks_hnsw_1024 on rag_chunks using hnsw ((embedding::vector(1024)) vector_cosine_ops)
  where dimension = 1024;
create index rag_chunks_hnsw_1536 on rag_chunks using hnsw ((embedding::vector(1536)) vector_cosine_ops)
  where dimension = 1536;
