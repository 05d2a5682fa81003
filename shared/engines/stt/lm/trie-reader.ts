import { readFile } from 'node:fs/promises';

/**
 * Reads sphinxbase's trie binary language model (`en-us.lm.bin` in Debian's pocketsphinx-en-us; sphinxbase
 * 5prealpha `ngram_model_trie.c`/`lm_trie.c`). We read it ourselves because Debian's `sphinx_lm_convert` cannot
 * write it back out as ARPA (an assertion in `ngram_model_trie_write_arpa` fails on this very file), and the
 * language-model builder needs the general model's n-grams to interpolate with. Layout: header, order (u8),
 * counts (u32 × order), an int, the quantisation tables (16-bit bins of float32), the unigrams (prob, backoff,
 * next: f32 f32 u32, one extra as the end pointer), the bit-packed middle and longest n-gram arrays, and the word
 * strings (i32 byte count, then NUL-separated words). Probabilities are stored as log floats in base 1.0001.
 */

const HEADER = 'Trie Language Model';
/** log10 of the log base sphinxbase writes with (pocketsphinx's default -logbase 1.0001). */
const LOG10_OF_BASE = Math.log10(1.0001);
const QUANT_BITS = 16;

export interface TrieModel {
  order: number;
  words: string[];
  /** log10 probability and backoff per unigram, by word id. */
  uniProb: Float32Array;
  uniBackoff: Float32Array;
  /**
   * Calls `visit` for every bigram and trigram in trie order (the trie is keyed by the last word, then the ones
   * before it, so each bigram comes just before the trigrams that extend it to the left): `words` are ids, oldest
   * first, and the array is reused between calls; `backoff` is NaN for the highest order.
   */
  forEach(visit: (words: readonly number[], prob: number, backoff: number) => void): void;
  counts: number[];
}

function requiredBits(max: number): number {
  if (!max) return 0;
  let r = 1;
  while ((max >>>= 1)) r++;
  return r;
}

/** Bytes of one bit-packed array: (entries + 1) × bits rounded up, plus 8 bytes of slack (sphinxbase's base_size). */
function baseSize(entries: number, maxVocab: number, remainingBits: number): number {
  const total = requiredBits(maxVocab) + remainingBits;
  return Math.floor(((1 + entries) * total + 7) / 8) + 8;
}

export async function readTrieModel(path: string): Promise<TrieModel> {
  const buf = await readFile(path);
  if (buf.toString('latin1', 0, HEADER.length) !== HEADER) throw new Error(`${path}: not a trie language model`);
  let off = HEADER.length;
  const order = buf.readUInt8(off++);
  if (order < 1 || order > 3) throw new Error(`${path}: order ${order} is not supported`);
  const counts: number[] = [];
  for (let i = 0; i < order; i++, off += 4) counts.push(buf.readUInt32LE(off));
  const toLog10 = (v: number) => v * LOG10_OF_BASE;
  let quant: Float32Array | null = null;
  if (order > 1) {
    off += 4; // an unused int written before the tables
    const floats = ((order - 2) * 2 + 1) << QUANT_BITS;
    quant = new Float32Array(floats);
    for (let i = 0; i < floats; i++) quant[i] = buf.readFloatLE(off + i * 4);
    off += floats * 4;
  }
  const n1 = counts[0]!;
  const uniProb = new Float32Array(n1);
  const uniBackoff = new Float32Array(n1);
  const uniNext = new Uint32Array(n1 + 1);
  for (let i = 0; i <= n1; i++, off += 12) {
    if (i < n1) {
      uniProb[i] = toLog10(buf.readFloatLE(off));
      uniBackoff[i] = toLog10(buf.readFloatLE(off + 4));
    }
    uniNext[i] = buf.readUInt32LE(off + 8);
  }
  const wordBits = requiredBits(n1);
  // Middle (order 2 of 3): word, backoff bin, prob bin, next pointer; longest: word, prob bin.
  const nextBits = order === 3 ? requiredBits(counts[2]!) : 0;
  const middleBits = wordBits + 2 * QUANT_BITS + nextBits;
  const middleStart = off;
  const middleBytes = order === 3 ? baseSize(counts[1]!, n1, 2 * QUANT_BITS + nextBits) : 0;
  const longestStart = middleStart + middleBytes;
  const longestBits = wordBits + QUANT_BITS;
  const longestBytes = order > 1 ? baseSize(counts[order - 1]!, n1, QUANT_BITS) : 0;
  off = longestStart + longestBytes;
  const strBytes = buf.readInt32LE(off);
  const words = buf
    .toString('utf8', off + 4, off + 4 + strBytes)
    .split('\0')
    .slice(0, n1);
  if (words.length !== n1) throw new Error(`${path}: ${words.length} word strings for ${n1} unigrams`);

  /** sphinxbase's bitarr_read_int25 (little-endian): up to 25 bits at a bit offset. */
  const read = (start: number, bitOffset: number, length: number): number => {
    const byte = start + (bitOffset >>> 3);
    const v = buf[byte]! | (buf[byte + 1]! << 8) | (buf[byte + 2]! << 16) | (buf[byte + 3]! << 24);
    return ((v >>> (bitOffset & 7)) & ((1 << length) - 1)) >>> 0;
  };
  const table = (i: number) => i << QUANT_BITS;

  const forEach: TrieModel['forEach'] = (visit) => {
    if (order < 2) return;
    const pair = [0, 0];
    const triple = [0, 0, 0];
    for (let w1 = 0; w1 < n1; w1++) {
      const begin = uniNext[w1]!;
      const end = uniNext[w1 + 1]!;
      for (let p = begin; p < end; p++) {
        if (order === 2) {
          const at = p * longestBits;
          pair[0] = read(longestStart, at, wordBits);
          pair[1] = w1;
          visit(pair, toLog10(quant![table(0) + read(longestStart, at + wordBits, QUANT_BITS)]!), NaN);
          continue;
        }
        const at = p * middleBits;
        const w2 = read(middleStart, at, wordBits);
        const bo = toLog10(quant![table(1) + read(middleStart, at + wordBits, QUANT_BITS)]!);
        const prob = toLog10(quant![table(0) + read(middleStart, at + wordBits + QUANT_BITS, QUANT_BITS)]!);
        pair[0] = w2;
        pair[1] = w1;
        visit(pair, prob, bo);
        const nextAt = wordBits + 2 * QUANT_BITS;
        const tBegin = read(middleStart, at + nextAt, nextBits);
        const tEnd = read(middleStart, (p + 1) * middleBits + nextAt, nextBits);
        for (let q = tBegin; q < tEnd; q++) {
          const qa = q * longestBits;
          triple[0] = read(longestStart, qa, wordBits);
          triple[1] = w2;
          triple[2] = w1;
          visit(triple, toLog10(quant![table(2) + read(longestStart, qa + wordBits, QUANT_BITS)]!), NaN);
        }
      }
    }
  };
  return { order, words, uniProb, uniBackoff, forEach, counts };
}
