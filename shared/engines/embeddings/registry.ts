import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../kernel/config/index.ts';
import { EngineRegistry } from '../core/registry.ts';
import { CohereEmbeddings } from './cohere.ts';
import { LocalSifEmbeddings } from './local-sif.ts';
import { OpenAiEmbeddings } from './openai.ts';
import type { EmbeddingEngine } from './types.ts';
import { VoyageEmbeddings } from './voyage.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Where the compiled local model lives; relative paths are taken from the repository root. */
export function localModelPath(config: Pick<Config, 'EMBEDDINGS_MODEL_PATH'>): string {
  const p = config.EMBEDDINGS_MODEL_PATH;
  return isAbsolute(p) ? p : resolve(REPO_ROOT, p);
}

/**
 * Builds the embeddings registry from config: `default` (local, no key) plus the vendor adapters. The local model
 * loads on its first use (about a third of a second), not here. `infra.engines.embeddings.get(provider)` → 400
 * provider_unavailable if unknown.
 */
export function buildEmbeddingRegistry(config: Config): EngineRegistry<EmbeddingEngine> {
  const urls = config.vendors.baseUrls;
  return new EngineRegistry<EmbeddingEngine>('embeddings')
    .register('default', new LocalSifEmbeddings({ modelPath: localModelPath(config) }))
    .register('openai', new OpenAiEmbeddings({ baseUrl: urls.openai, model: config.EMBEDDINGS_OPENAI_MODEL }))
    .register('cohere', new CohereEmbeddings({ baseUrl: urls.cohere, model: config.EMBEDDINGS_COHERE_MODEL }))
    .register('voyage', new VoyageEmbeddings({ baseUrl: urls.voyage, model: config.EMBEDDINGS_VOYAGE_MODEL }));
}
