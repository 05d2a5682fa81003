import { EngineError } from '../../kernel/errors/engine-error.ts';
import { trimSlash, vendorJson } from '../core/vendor-client.ts';
import { requireKey } from './types.ts';
import { EmbeddingEngine, type EmbedOptions, type EmbeddingCapabilities } from './types.ts';

export interface CohereEmbeddingsOptions {
  /** Defaults to https://api.cohere.com. */
  baseUrl?: string;
  model?: string;
  dimension?: number;
  timeoutMs?: number;
}

const DIMENSIONS: Record<string, number> = {
  'embed-english-v3.0': 1024,
  'embed-multilingual-v3.0': 1024,
  'embed-english-light-v3.0': 384,
  'embed-multilingual-light-v3.0': 384,
  'embed-v4.0': 1536,
};

interface CohereEmbedResponse {
  id?: string;
  embeddings: { float?: number[][] };
  meta?: { billed_units?: { input_tokens?: number } };
}

/**
 * Cohere v2 embed: POST {base}/v2/embed {model, texts, input_type: search_document|search_query,
 * embedding_types: ['float'], truncate: 'END'} → {embeddings: {float: [[…]]}}. At most 96 texts per call.
 */
export class CohereEmbeddings extends EmbeddingEngine {
  readonly provider = 'cohere';
  readonly label: string;
  readonly model: string;
  readonly dimension: number;
  readonly capabilities: EmbeddingCapabilities = { requiresKey: true, maxBatch: 96 };
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(opts: CohereEmbeddingsOptions = {}) {
    super();
    this.model = opts.model ?? 'embed-english-v3.0';
    const dim = opts.dimension ?? DIMENSIONS[this.model];
    if (!dim) throw new Error(`cohere embeddings: unknown dimension of model ${this.model}; set it explicitly`);
    this.dimension = dim;
    this.label = `cohere.${this.model}`;
    this.baseUrl = trimSlash(opts.baseUrl ?? 'https://api.cohere.com');
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  protected async _embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    const key = requireKey(this.provider, opts.apiKey);
    const res = await vendorJson<CohereEmbedResponse>(this.provider, `${this.baseUrl}/v2/embed`, {
      headers: { authorization: `Bearer ${key}` },
      json: {
        model: this.model,
        texts,
        input_type: opts.inputType === 'query' ? 'search_query' : 'search_document',
        embedding_types: ['float'],
        truncate: 'END',
      },
      signal: opts.signal,
      headersTimeoutMs: this.timeoutMs,
      idempotent: true,
    });
    const floats = res.embeddings?.float;
    if (!Array.isArray(floats)) throw new EngineError(this.provider, 'upstream', 'cohere: no float embeddings', true);
    return floats.map((v) => Float32Array.from(v));
  }
}
