/**
 * One relevance score in 0-1 from two signals of a chunk against a query:
 *   cos — cosine similarity of the query and chunk embeddings (pgvector `1 - (a <=> b)`), and
 *   cov — full-text coverage: the share of the query's Postgres lexemes (english stemming, stop words
 *         removed) that occur in the chunk's tsvector.
 * score = σ(W_COS·cos + W_COV·cov + BIAS), a logistic fit on the committed retrieval set
 * (test/fixtures/rag) so that 0.7, the contract's default threshold, separates relevant chunks from unrelated
 * ones. Weights are per embedder family: the local engine's cosines run lower than a vendor model's.
 */
export interface ScoreWeights {
  cos: number;
  cov: number;
  bias: number;
}

export const LOCAL_WEIGHTS: ScoreWeights = { cos: 6.3, cov: 12.6, bias: -6.65 };
/** Vendor sentence-transformer models: cosines of related texts sit higher and spread less. */
export const VENDOR_WEIGHTS: ScoreWeights = { cos: 10, cov: 3, bias: -6.5 };

export function weightsFor(provider: string): ScoreWeights {
  return provider === 'default' ? LOCAL_WEIGHTS : VENDOR_WEIGHTS;
}

export function relevanceScore(cos: number, cov: number, w: ScoreWeights): number {
  const c = Number.isFinite(cos) ? cos : 0;
  const z = w.cos * c + w.cov * cov + w.bias;
  return Math.round((1 / (1 + Math.exp(-z))) * 1e4) / 1e4;
}
