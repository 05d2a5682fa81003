/**
 * The pruned background (background.ts) on disk, beside the models built on it. Every build runs in a process of its
 * own (language-models.ts), so the in-process memo never outlives one build: reading and pruning the general model
 * was about 4 s of a 9 s build on every agent save and every biased request. The file is keyed by the general model's
 * path, size and modification time and by the prune's size, so a new pocketsphinx-en-us or a new size is a new file;
 * a file that cannot be read is ignored and rebuilt. It runs under plain `node` (build-cli.ts): erasable TypeScript.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { NgramEntry, NgramModel } from './ngram-model.ts';

/** What background.ts prunes (its `Background`, declared here too so that the two files do not import each other). */
interface Background {
  words: string[];
  model: NgramModel;
}

/** Bump when the layout below changes. */
const FORMAT = 1;

/** The cache file for this general model and size, in `dir`. */
export async function backgroundCachePath(dir: string, lmPath: string, size: object): Promise<string> {
  const s = await stat(lmPath);
  const id = JSON.stringify({ FORMAT, lmPath, size, bytes: s.size, mtimeMs: s.mtimeMs });
  return join(dir, `background-${createHash('sha256').update(id).digest('hex').slice(0, 24)}.bin`);
}

/**
 * Layout: u32 header length, the header (JSON: words and the entry count of each order), padding to 8 bytes, then per
 * order three float64 arrays: keys, log10 probabilities, log10 backoffs (float64, so the model read back is the one
 * written, bit for bit).
 */
export function encodeBackground(bg: Background): Buffer {
  const counts = bg.model.orders.map((o) => o.size);
  const header = Buffer.from(JSON.stringify({ words: bg.words, counts }));
  const headerEnd = align8(4 + header.length);
  const out = Buffer.alloc(headerEnd + counts.reduce((a, n) => a + n * 24, 0));
  out.writeUInt32LE(header.length, 0);
  header.copy(out, 4);
  let off = headerEnd;
  for (const order of bg.model.orders) {
    const n = order.size;
    let i = 0;
    for (const [k, e] of order) {
      out.writeDoubleLE(k, off + i * 8);
      out.writeDoubleLE(e.prob, off + (n + i) * 8);
      out.writeDoubleLE(e.backoff, off + (2 * n + i) * 8);
      i++;
    }
    off += n * 24;
  }
  return out;
}

export function decodeBackground(buf: Buffer): Background {
  const headerLength = buf.readUInt32LE(0);
  const header = JSON.parse(buf.toString('utf8', 4, 4 + headerLength)) as { words: string[]; counts: number[] };
  let off = align8(4 + headerLength);
  const orders: Array<Map<number, NgramEntry>> = [];
  for (const n of header.counts) {
    const order = new Map<number, NgramEntry>();
    for (let i = 0; i < n; i++) {
      order.set(buf.readDoubleLE(off + i * 8), {
        prob: buf.readDoubleLE(off + (n + i) * 8),
        backoff: buf.readDoubleLE(off + (2 * n + i) * 8),
      });
    }
    orders.push(order);
    off += n * 24;
  }
  if (off !== buf.length) throw new Error(`background cache: ${buf.length - off} bytes left over`);
  return { words: header.words, model: { orders } };
}

/** The cached background, or null when there is none or it cannot be read. */
export async function readCachedBackground(path: string): Promise<Background | null> {
  try {
    return decodeBackground(await readFile(path));
  } catch {
    return null;
  }
}

/** Writes the cache whole or not at all (a concurrent build writing the same file is harmless). */
export async function writeCachedBackground(path: string, bg: Background): Promise<void> {
  const tmp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(tmp, encodeBackground(bg));
    await rename(tmp, path);
  } catch {
    // a read-only or full disk: the next build prunes again
  } finally {
    await rm(tmp, { force: true });
  }
}

function align8(n: number): number {
  return Math.ceil(n / 8) * 8;
}
