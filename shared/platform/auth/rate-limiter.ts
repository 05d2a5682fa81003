import type { Redis } from 'ioredis';
import { ApiError } from '../../kernel/errors/api-error.ts';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  windowSeconds: number;
}

// Reserve `n` slots of the window's counter and set its expiry on first use, in one round trip.
const SCRIPT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/** Largest block of slots a process reserves at once; bounds how far several processes can overshoot. */
const MAX_BLOCK = 50;

interface Lease {
  window: number;
  /** Next slot number (1-based count within the window) this process hands out. */
  next: number;
  /** Last slot number of the reserved block. */
  end: number;
}

/**
 * Fixed-window limiter in Redis, keyed by window index so every process agrees on window boundaries.
 *
 * Each process reserves a block of slots at a time (INCRBY) and hands them out locally, so a busy key costs one
 * Redis round trip per block rather than per request. Blocks are limit/50 (1 to 50 slots): small limits stay
 * exact; with P processes a large limit is reached at most P−1 blocks early (never exceeded), and a process's
 * unused slots simply lapse with the window.
 */
export class RateLimiter {
  private sha: string | null = null;
  private readonly leases = new Map<string, Lease>();
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly windowSeconds: number,
  ) {}

  async hit(subject: string, limit: number): Promise<RateLimitResult> {
    const windowMs = this.windowSeconds * 1000;
    const now = Date.now();
    const index = Math.floor(now / windowMs);
    const count = await this.take(subject, index, limit, windowMs);
    const resetSeconds = Math.max(1, Math.ceil(((index + 1) * windowMs - now) / 1000));
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds,
      windowSeconds: this.windowSeconds,
    };
  }

  private async take(subject: string, index: number, limit: number, windowMs: number): Promise<number> {
    for (;;) {
      const lease = this.leases.get(subject);
      if (lease && lease.window === index && lease.next <= lease.end) return lease.next++;
      // Past the limit for this window: no need to ask Redis again until the window turns.
      if (lease && lease.window === index && lease.end > limit) return lease.end + 1;
      const inFlight = this.pending.get(subject);
      if (inFlight) {
        await inFlight;
        continue;
      }
      const block = Math.max(1, Math.min(MAX_BLOCK, Math.floor(limit / 50)));
      const fetching = this.reserve(`${this.prefix}:rl:${subject}:${index}`, block, windowMs + 1000).then((end) => {
        if (this.leases.size > 10_000) this.prune(index);
        this.leases.set(subject, { window: index, next: end - block + 1, end });
      });
      this.pending.set(subject, fetching);
      try {
        await fetching;
      } finally {
        this.pending.delete(subject);
      }
    }
  }

  private prune(index: number): void {
    for (const [k, v] of this.leases) if (v.window !== index) this.leases.delete(k);
  }

  private async reserve(key: string, n: number, ttlMs: number): Promise<number> {
    if (this.sha) {
      try {
        return (await this.redis.evalsha(this.sha, 1, key, ttlMs, n)) as number;
      } catch (e) {
        if (!String((e as Error).message).includes('NOSCRIPT')) throw e;
      }
    }
    this.sha = (await this.redis.script('LOAD', SCRIPT)) as string;
    return (await this.redis.evalsha(this.sha, 1, key, ttlMs, n)) as number;
  }
}

/** The 429 of an exhausted window, with Retry-After. */
export function rateLimitedError(rl: RateLimitResult): ApiError {
  return new ApiError(
    'rate_limited',
    { limit: rl.limit, window: rl.windowSeconds, retryAfter: rl.resetSeconds },
    null,
    {
      'retry-after': String(rl.resetSeconds),
    },
  );
}
