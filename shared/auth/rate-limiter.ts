import type { Redis } from 'ioredis';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  windowSeconds: number;
}

// INCR the window's counter and set its expiry on first use, in one round trip.
const SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/**
 * Fixed-window limiter in Redis, keyed by window index so every process agrees on window boundaries without a
 * TTL read. Counts are per subject (an API key id).
 */
export class RateLimiter {
  private sha: string | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly windowSeconds: number,
  ) {}

  async hit(subject: string, limit: number): Promise<RateLimitResult> {
    const windowMs = this.windowSeconds * 1000;
    const now = Date.now();
    const index = Math.floor(now / windowMs);
    const key = `${this.prefix}:rl:${subject}:${index}`;
    const count = await this.eval(key, windowMs + 1000);
    const resetSeconds = Math.max(1, Math.ceil(((index + 1) * windowMs - now) / 1000));
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds,
      windowSeconds: this.windowSeconds,
    };
  }

  private async eval(key: string, ttlMs: number): Promise<number> {
    if (this.sha) {
      try {
        return (await this.redis.evalsha(this.sha, 1, key, ttlMs)) as number;
      } catch (e) {
        if (!String((e as Error).message).includes('NOSCRIPT')) throw e;
      }
    }
    this.sha = (await this.redis.script('LOAD', SCRIPT)) as string;
    return (await this.redis.evalsha(this.sha, 1, key, ttlMs)) as number;
  }
}
