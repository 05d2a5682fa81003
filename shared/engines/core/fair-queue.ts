/** Who a piece of local engine work is for: the developer it is charged to, and whether a live call waits for it. */
export interface WorkOwner {
  /** The developer (tenant) the work is for; work without one shares one anonymous turn. */
  tenant?: string;
  /** A live call is waiting (its first audio, the next sentence of its reply): served before any batch work. */
  live?: boolean;
}

interface Waiting<T> {
  item: T;
  seq: number;
}

/** Tenants remembered for their last turn; past this many the memory starts over (every tenant ties again). */
const MAX_REMEMBERED = 10_000;

/**
 * The order in which a pool of local engine workers takes waiting work: live calls first (one FIFO lane), then
 * batch work fairly across developers: the next item goes to the waiting developer served least recently (a
 * developer never served, or not for longest, goes first; ties by arrival). So one developer's hundred queued
 * pieces delay another developer's request by at most one piece per worker, whatever the order they arrived in.
 * Within one developer, work stays in arrival order. Pure bookkeeping: the pool decides when a worker is free.
 */
export class FairQueue<T> {
  private readonly live: Waiting<T>[] = [];
  private readonly batch = new Map<string, Waiting<T>[]>();
  /** When each tenant was last served (a turn counter): the least recent waiting tenant goes next. */
  private readonly lastTurn = new Map<string, number>();
  private seq = 0;
  private turn = 0;

  get length(): number {
    let n = this.live.length;
    for (const q of this.batch.values()) n += q.length;
    return n;
  }

  push(item: T, owner: WorkOwner = {}): void {
    const w = { item, seq: this.seq++ };
    if (owner.live) {
      this.live.push(w);
      return;
    }
    const tenant = owner.tenant ?? '';
    const q = this.batch.get(tenant);
    if (q) q.push(w);
    else this.batch.set(tenant, [w]);
  }

  /** The next item to run, or undefined when nothing waits (or, with `liveOnly`, no live work waits). */
  shift(opts: { liveOnly?: boolean } = {}): T | undefined {
    const live = this.live.shift();
    if (live) return live.item;
    if (opts.liveOnly) return undefined;
    let best: { tenant: string; q: Waiting<T>[]; last: number } | null = null;
    for (const [tenant, q] of this.batch) {
      const last = this.lastTurn.get(tenant) ?? -1;
      if (!best || last < best.last || (last === best.last && q[0]!.seq < best.q[0]!.seq)) best = { tenant, q, last };
    }
    if (!best) return undefined;
    const w = best.q.shift()!;
    if (best.q.length === 0) this.batch.delete(best.tenant);
    if (this.lastTurn.size >= MAX_REMEMBERED && !this.lastTurn.has(best.tenant)) this.lastTurn.clear();
    this.lastTurn.set(best.tenant, this.turn++);
    return w.item;
  }

  /** Takes a waiting item out (its caller gave up); false when it was not waiting. */
  remove(item: T): boolean {
    const i = this.live.findIndex((w) => w.item === item);
    if (i >= 0) {
      this.live.splice(i, 1);
      return true;
    }
    for (const [tenant, q] of this.batch) {
      const j = q.findIndex((w) => w.item === item);
      if (j < 0) continue;
      q.splice(j, 1);
      if (q.length === 0) this.batch.delete(tenant);
      return true;
    }
    return false;
  }

  /** Empties the queue, returning everything that waited. */
  drain(): T[] {
    const all = [...this.live, ...[...this.batch.values()].flat()].map((w) => w.item);
    this.live.length = 0;
    this.batch.clear();
    return all;
  }
}
