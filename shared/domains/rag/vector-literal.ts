import pgvector from 'pgvector';

/**
 * A query parameter for a pgvector `vector` column, in pgvector's own text form (`pgvector.toSql`). Each float32 is
 * written with 9 significant digits, the fewest that always read back to the same float32 (a float64 rendering of
 * a float32 is twice as long for the same value), and a non-finite component becomes 0 so one bad value does not
 * fail a whole batch.
 */
export function toVectorSql(v: Float32Array | readonly number[]): string {
  return pgvector.toSql(Array.from(v, (x) => (Number.isFinite(x) ? Number(x.toPrecision(9)) : 0))) as string;
}
