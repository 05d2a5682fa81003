import pg from 'pg';
import pgvector from 'pgvector/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toVectorSql } from '../../shared/domains/rag/vector-literal.ts';
import { createTestDatabase } from '../../support/helpers/db.ts';

describe('vector parameters (pgvector)', () => {
  let db: { url: string; drop(): Promise<void> };
  let client: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await pgvector.registerTypes(client);
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('round-trips every float32 exactly through a vector column', async () => {
    const v = Float32Array.from({ length: 257 }, (_, i) => Math.sin(i * 1.37) * 10 ** ((i % 9) - 4));
    const { rows } = await client.query<{ v: number[] }>('select $1::vector as v', [toVectorSql(v)]);
    expect(Float32Array.from(rows[0]!.v)).toEqual(v);
  });

  it('writes a non-finite component as 0 instead of failing the statement', async () => {
    const { rows } = await client.query<{ v: number[] }>('select $1::vector(3) as v', [
      toVectorSql([1, NaN, -Infinity]),
    ]);
    expect(rows[0]!.v).toEqual([1, 0, 0]);
  });
});
