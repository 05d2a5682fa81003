/**
 * Synthesized audio of fixed phrases (an agent's first message, fillers), by voice and text, shared by the sessions
 * of a process: every call to an agent greets with the same words, and rendering them once saves the synthesis
 * CPU (local engine) or the billed characters (vendor) of every later call. Least recently used phrases go first
 * once the cache holds `maxBytes` of audio.
 */
export class PhraseCache {
  private readonly entries = new Map<string, Buffer[]>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): Buffer[] | null {
    const hit = this.entries.get(key);
    if (!hit) {
      this.misses++;
      return null;
    }
    // Map keeps insertion order: re-inserting marks the entry as the most recently used.
    this.entries.delete(key);
    this.entries.set(key, hit);
    this.hits++;
    return hit;
  }

  set(key: string, chunks: Buffer[]): void {
    const size = chunks.reduce((n, c) => n + c.length, 0);
    if (size > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.reduce((n, c) => n + c.length, 0);
    }
    this.entries.set(key, chunks);
    this.bytes += size;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.reduce((n, c) => n + c.length, 0);
    }
  }

  get sizeBytes(): number {
    return this.bytes;
  }
}

/** The process's cache of fixed phrases: 16 MB holds some 17 minutes of 8 kHz phone audio. */
export const fixedPhrases = new PhraseCache(16 * 1024 * 1024);
