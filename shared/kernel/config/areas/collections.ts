import { z } from 'zod';
import { envInt } from '../env.ts';

/** Environment variables of the collections area (merged into EnvSchema; documented in the README). */
export const collectionsEnv = {
  EMBEDDINGS_MODEL_PATH: z
    .string()
    .default('.data/embeddings/glove-sif-100d.bin')
    .describe('Compiled local embedding model (written by scripts/setup.d/30-embeddings.sh)'),
  EMBEDDINGS_OPENAI_MODEL: z
    .string()
    .default('text-embedding-3-small')
    .describe('Model of the openai embeddings adapter'),
  EMBEDDINGS_COHERE_MODEL: z.string().default('embed-english-v3.0').describe('Model of the cohere embeddings adapter'),
  EMBEDDINGS_VOYAGE_MODEL: z.string().default('voyage-3.5').describe('Model of the voyage embeddings adapter'),
  RAG_HNSW_EF_SEARCH: envInt(10, 1000)
    .default(200)
    .describe('hnsw.ef_search for collection search (higher: better recall, slower)'),
} satisfies z.ZodRawShape;
