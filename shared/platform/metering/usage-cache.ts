import type { Logger } from '../../kernel/observability/logger.ts';
import type { Redis } from '../../kernel/redis.ts';

/** A developer's balance as the X-Usage-* headers need it, with the account revision it was read at. */
export interface CachedUsage {
  rev: number;
  used: number;
  limit: number;
  /** Epoch ms; an entry past its period's end is never served (the period rolls over on the next read). */
  periodEnd: number;
}

const SHARED_TTL_MS = 60_000;
const MAX_LOCAL = 100_000;

// Compare-and-set by revision: a slower writer holding an older balance never overwrites a newer one.
const PUT_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local rev = tonumber(string.match(cur, '^(%d+)|'))
  if rev and rev > tonumber(ARGV[1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. ARGV[2], 'PX', ARGV[3])
return 1`;

type RedisWithPut = Redis & {
  vapUsagePut(key: string, rev: number, value: string, ttl: number): Promise<number>;
};

/**
 * Two levels: this process's map (a few hundred ms to a second, no I/O at all) and a Redis copy shared by every
 * process. Every charge writes the new balance through both, so the process that charged is exact at once and
 * others within their local TTL.
 */
export class UsageCache {
  private readonly local = new Map<string, { value: CachedUsage; expires: number }>();
  private readonly inflight = new Map<string, Promise<unknown>>();
  private readonly redis: RedisWithPut;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly localTtlMs: number,
    private readonly log: Logger,
  ) {
    if (!('vapUsagePut' in redis)) redis.defineCommand('vapUsagePut', { numberOfKeys: 1, lua: PUT_SCRIPT });
    this.redis = redis as RedisWithPut;
  }

  private key(developerId: string): string {
    return `${this.prefix}:usage:${developerId}`;
  }

  peek(developerId: string): CachedUsage | null {
    const e = this.local.get(developerId);
    const now = Date.now();
    if (!e || e.expires <= now || e.value.periodEnd <= now) return null;
    return e.value;
  }

  async fetchShared(developerId: string): Promise<CachedUsage | null> {
    try {
      const raw = await this.redis.get(this.key(developerId));
      if (!raw) return null;
      const [rev, used, limit, periodEnd] = raw.split('|').map(Number) as [number, number, number, number];
      if (!(periodEnd > Date.now())) return null;
      const value = { rev, used, limit, periodEnd };
      this.setLocal(developerId, value);
      return value;
    } catch (e) {
      this.log.debug({ err: (e as Error).message }, 'usage cache read failed');
      return null;
    }
  }

  put(developerId: string, value: CachedUsage): void {
    this.setLocal(developerId, value);
    const encoded = `${value.used}|${value.limit}|${value.periodEnd}`;
    this.redis
      .vapUsagePut(this.key(developerId), value.rev, encoded, SHARED_TTL_MS)
      .catch((e: Error) => this.log.debug({ err: e.message }, 'usage cache write failed'));
  }

  /** Runs one load per developer at a time; concurrent callers share its result. */
  single<T>(developerId: string, load: () => Promise<T>): Promise<T> {
    const running = this.inflight.get(developerId) as Promise<T> | undefined;
    if (running) return running;
    const p = load().finally(() => this.inflight.delete(developerId));
    this.inflight.set(developerId, p);
    return p;
  }

  private setLocal(developerId: string, value: CachedUsage): void {
    const cur = this.local.get(developerId);
    const now = Date.now();
    if (cur && cur.expires > now && cur.value.rev > value.rev) return;
    if (this.local.size >= MAX_LOCAL) this.local.clear();
    this.local.set(developerId, { value, expires: now + this.localTtlMs });
  }
}
