import { EngineError } from '../../kernel/errors/engine-error.ts';
import { trimSlash, vendorJson } from '../core/vendor-client.ts';
import { requireKey } from './types.ts';
import { EmbeddingEngine, type EmbedOptions, type EmbeddingCapabilities } from './types.ts';

export interface OpenAiEmbeddingsOptions {
  /** Defaults to https://api.openai.com/v1; any OpenAI-compatible server works. */
  baseUrl?: string;
  model?: string;
  /** Native size of the model (text-embedding-3-small 1536, -large 3072, ada-002 1536). */
  dimension?: number;
  timeoutMs?: number;
}

const DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

interface OpenAiEmbeddingResponse {
  data: { index: number; embedding: number[] }[];
  usage?: { prompt_tokens?: number; total_tokens?: number };
}

/** POST {base}/embeddings {model, input: string[], encoding_format: 'float'} → {data: [{index, embedding}]}. */
export class OpenAiEmbeddings extends EmbeddingEngine {
  readonly provider = 'openai';
  readonly label: string;
  readonly model: string;
  readonly dimension: number;
  readonly capabilities: EmbeddingCapabilities = { requiresKey: true, maxBatch: 256 };
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(opts: OpenAiEmbeddingsOptions = {}) {
    super();
    this.model = opts.model ?? 'text-embedding-3-small';
    const dim = opts.dimension ?? DIMENSIONS[this.model];
    if (!dim) throw new Error(`openai embeddings: unknown dimension of model ${this.model}; set it explicitly`);
    this.dimension = dim;
    this.label = `openai.${this.model}`;
    this.baseUrl = trimSlash(opts.baseUrl ?? 'https://api.openai.com/v1');
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  protected async _embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    const key = requireKey(this.provider, opts.apiKey);
    const res = await vendorJson<OpenAiEmbeddingResponse>(this.provider, `${this.baseUrl}/embeddings`, {
      headers: { authorization: `Bearer ${key}` },
      json: { model: this.model, input: texts, encoding_format: 'float' },
      signal: opts.signal,
      headersTimeoutMs: this.timeoutMs,
      idempotent: true,
    });
    if (!Array.isArray(res.data)) throw new EngineError(this.provider, 'upstream', 'openai: no data array', true);
    const out = new Array<Float32Array>(texts.length);
    for (const d of res.data) out[d.index] = Float32Array.from(d.embedding);
    return out.filter(Boolean);
  }
}
