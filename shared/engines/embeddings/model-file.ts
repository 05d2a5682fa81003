import { readFileSync } from 'node:fs';

/**
 * The compiled local embedding model: one little-endian binary file, loaded with a single read.
 *
 *   0   magic "VAPEMB01" (8 bytes)
 *   8   u32 dimension, u32 word count, u32 vocabulary byte length, u32 reserved
 *   24  f32[dimension]            first principal component of reference sentence vectors (removed from every vector)
 *   ..  f32[count]                SIF weight a / (a + p(w)) per word
 *   ..  f32[count]                int8 scale per word (component = int8 * scale)
 *   ..  i8[count * dimension]     quantised word vectors, in the source's frequency-rank order
 *   ..  utf-8 words joined by "\n"
 */
export const MODEL_MAGIC = 'VAPEMB01';

export interface CompiledModel {
  dimension: number;
  count: number;
  pc: Float32Array;
  weights: Float32Array;
  scales: Float32Array;
  vectors: Int8Array;
  words: string[];
}

export function encodeModel(m: CompiledModel): Buffer {
  const vocab = Buffer.from(m.words.join('\n'), 'utf8');
  const header = Buffer.alloc(24);
  header.write(MODEL_MAGIC, 0, 'latin1');
  header.writeUInt32LE(m.dimension, 8);
  header.writeUInt32LE(m.count, 12);
  header.writeUInt32LE(vocab.length, 16);
  const vecPad = (4 - ((m.count * m.dimension) % 4)) % 4;
  return Buffer.concat([
    header,
    Buffer.from(m.pc.buffer, m.pc.byteOffset, m.pc.byteLength),
    Buffer.from(m.weights.buffer, m.weights.byteOffset, m.weights.byteLength),
    Buffer.from(m.scales.buffer, m.scales.byteOffset, m.scales.byteLength),
    Buffer.from(m.vectors.buffer, m.vectors.byteOffset, m.vectors.byteLength),
    Buffer.alloc(vecPad),
    vocab,
  ]);
}

export function decodeModel(buf: Buffer): CompiledModel {
  if (buf.length < 24 || buf.toString('latin1', 0, 8) !== MODEL_MAGIC) {
    throw new Error('not a compiled embedding model (bad magic); run scripts/setup.d/30-embeddings.sh');
  }
  const dimension = buf.readUInt32LE(8);
  const count = buf.readUInt32LE(12);
  const vocabLength = buf.readUInt32LE(16);
  // Typed views need 4-byte alignment: a file read on its own is aligned; copy only when it is not.
  const aligned = buf.byteOffset % 4 === 0 ? buf : Buffer.from(buf);
  const ab = aligned.buffer;
  let off = aligned.byteOffset + 24;
  const pc = new Float32Array(ab, off, dimension);
  off += dimension * 4;
  const weights = new Float32Array(ab, off, count);
  off += count * 4;
  const scales = new Float32Array(ab, off, count);
  off += count * 4;
  const vectors = new Int8Array(ab, off, count * dimension);
  off += count * dimension + ((4 - ((count * dimension) % 4)) % 4);
  const start = off - aligned.byteOffset;
  const words = aligned.toString('utf8', start, start + vocabLength).split('\n');
  if (words.length !== count) throw new Error(`compiled model is corrupt: ${words.length} words, header says ${count}`);
  return { dimension, count, pc, weights, scales, vectors, words };
}

export function readModel(path: string): CompiledModel {
  return decodeModel(readFileSync(path));
}
