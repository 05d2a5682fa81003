import { EngineError } from '../../kernel/errors/engine-error.ts';
import { trimSlash, vendorJson } from '../core/vendor-client.ts';
import { requireKey } from './types.ts';
import { EmbeddingEngine, type EmbedOptions, type EmbeddingCapabilities } from './types.ts';

export interface VoyageEmbeddingsOptions {
  /** Defaults to https://api.voyageai.com/v1. */
  baseUrl?: string;
  model?: string;
  dimension?: number;
  timeoutMs?: number;
}

const DIMENSIONS: Record<string, number> = {
  'voyage-3.5': 1024,
  'voyage-3.5-lite': 1024,
  'voyage-3': 1024,
  'voyage-3-lite': 512,
  'voyage-3-large': 1024,
  'voyage-code-3': 1024,
};

interface VoyageEmbeddingResponse {
  data: { index: number; embedding: number[] }[];
  usage?: { total_tokens?: number };
}

/**
 * Voyage: POST {base}/embeddings {input: string[], model, input_type: document|query, truncation: true}
 * → {data: [{index, embedding}], usage: {total_tokens}}.
 */
export class VoyageEmbeddings extends EmbeddingEngine {
  readonly provider = 'voyage';
  readonly label: string;
  readonly model: string;
  readonly dimension: number;
  readonly capabilities: EmbeddingCapabilities = { requiresKey: true, maxBatch: 128 };
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(opts: VoyageEmbeddingsOptions = {}) {
    super();
    this.model = opts.model ?? 'voyage-3.5';
    const dim = opts.dimension ?? DIMENSIONS[this.model];
    if (!dim) throw new Error(`voyage embeddings: unknown dimension of model ${this.model}; set it explicitly`);
    this.dimension = dim;
    this.label = `voyage.${this.model}`;
    this.baseUrl = trimSlash(opts.baseUrl ?? 'https://api.voyageai.com/v1');
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  protected async _embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    const key = requireKey(this.provider, opts.apiKey);
    const res = await vendorJson<VoyageEmbeddingResponse>(this.provider, `${this.baseUrl}/embeddings`, {
      headers: { authorization: `Bearer ${key}` },
      json: { input: texts, model: this.model, input_type: opts.inputType ?? 'document', truncation: true },
      signal: opts.signal,
      headersTimeoutMs: this.timeoutMs,
      idempotent: true,
    });
    if (!Array.isArray(res.data)) throw new EngineError(this.provider, 'upstream', 'voyage: no data array', true);
    const out = new Array<Float32Array>(texts.length);
    for (const d of res.data) out[d.index] = Float32Array.from(d.embedding);
    return out.filter(Boolean);
  }
}
