/**
 * Frames a bad line holds back (jitter): each goes out through `send` after its delay, and `cancel` drops what is
 * still held when the call closes. `send` is fixed per line, so holding a frame costs one timer and nothing more.
 */
export class DelayedSends<T> {
  private readonly pending = new Set<NodeJS.Timeout>();

  constructor(private readonly send: (out: T) => void) {}

  /** Sends `out` now, or after `delayMs` when the line delays it. */
  after(delayMs: number, out: T): void {
    if (delayMs <= 0) return this.send(out);
    const t = setTimeout(() => {
      this.pending.delete(t);
      this.send(out);
    }, delayMs);
    this.pending.add(t);
  }

  cancel(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }
}
