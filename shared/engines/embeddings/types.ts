import { EngineError, isEngineError } from '../../kernel/errors/engine-error.ts';
import { engineLatency } from '../core/metrics.ts';

/** What a text is embedded for: some vendors embed queries and documents differently. */
export type EmbedInputType = 'document' | 'query';

export interface EmbedOptions {
  /** The resolved provider key (caller header, stored key or platform key); absent for the local engine. */
  apiKey?: string;
  signal?: AbortSignal;
  /** Defaults to `document`. */
  inputType?: EmbedInputType;
}

export interface EmbeddingCapabilities {
  /** Needs a provider key (resolve it with resolveProviderKey before calling). */
  requiresKey: boolean;
  /** Largest number of texts one upstream call takes; `embed` splits larger inputs itself. */
  maxBatch: number;
}

/**
 * Base of every embeddings adapter: batching, latency metrics and error normalisation live here; adapters
 * implement `_embed` for one batch. Every vector an engine returns has `dimension` components; vectors are
 * compared with cosine similarity, so their norm carries no meaning.
 */
export abstract class EmbeddingEngine {
  abstract readonly provider: string;
  /** Honest name of the adapter and model, e.g. `glove-sif.embeddings`, `openai.text-embedding-3-small`. */
  abstract readonly label: string;
  /** The model id recorded with a collection (a collection never mixes models). */
  abstract readonly model: string;
  abstract readonly dimension: number;
  abstract readonly capabilities: EmbeddingCapabilities;
  protected abstract _embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]>;

  /** Rough token count of a text for usage reporting (vendors bill tokens; the local engine counts words). */
  countTokens(text: string): number {
    return Math.ceil(text.length / 4);
  }

  async embed(texts: string[], opts: EmbedOptions = {}): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const done = engineLatency.startTimer({ capability: 'embeddings', provider: this.provider });
    try {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += this.capabilities.maxBatch) {
        opts.signal?.throwIfAborted();
        const batch = texts.slice(i, i + this.capabilities.maxBatch);
        const vectors = await this._embed(batch, opts);
        if (vectors.length !== batch.length) {
          throw new EngineError(
            this.provider,
            'upstream',
            `${this.label} returned ${vectors.length} vectors for ${batch.length} texts`,
            true,
          );
        }
        for (const v of vectors) {
          if (v.length !== this.dimension) {
            throw new EngineError(
              this.provider,
              'upstream',
              `${this.label} returned a ${v.length}-dimensional vector, expected ${this.dimension}`,
              false,
            );
          }
          out.push(v);
        }
      }
      done({ outcome: 'ok' });
      return out;
    } catch (e) {
      done({ outcome: 'error' });
      throw isEngineError(e) ? e : EngineError.network(this.provider, e);
    }
  }
}

/** The resolved provider key of a keyed embedder, or a permanent auth error when the route resolved none. */
export function requireKey(provider: string, apiKey: string | undefined): string {
  if (!apiKey) throw new EngineError(provider, 'auth', `${provider} needs an API key`, false);
  return apiKey;
}
