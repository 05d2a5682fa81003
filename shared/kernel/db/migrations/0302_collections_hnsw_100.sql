-- The local engine's 100-d HNSW index with a denser graph than pgvector's defaults (m 16, ef_construction 64).
-- GloVe-like 100-d vectors are a hard case for HNSW: at 100k chunks, recall@10 against exact search was 0.84 at
-- ef_search 100 and 0.97 only at ef_search 400 with the defaults; with m 24 / ef_construction 100 it is 0.97 at
-- ef_search 200 for 25 % less CPU per search (benchmarks/rag/README.md). Inserts cost somewhat more.
drop index if exists rag_chunks_hnsw_100;
create index rag_chunks_hnsw_100 on rag_chunks using hnsw ((embedding::vector(100)) vector_cosine_ops)
  with (m = 24, ef_construction = 100)
  where dimension = 100;
