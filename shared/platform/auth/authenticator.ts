import type { Redis } from 'ioredis';
import { findKeyByHash, touchKeys, type KeyAuthRow } from '../../kernel/db/api-keys.ts';
import type { Db } from '../../kernel/db/pool.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import { API_KEY_PREFIX, hashApiKey, isWellFormedApiKey } from './api-key-format.ts';

export interface AuthContext {
  developerId: string;
  keyId: string;
  tier: string;
}

interface CacheEntry {
  row: KeyAuthRow | null;
  at: number;
}

const POSITIVE_TTL_MS = 60_000;
const NEGATIVE_TTL_MS = 5_000;
const TOUCH_FLUSH_MS = 15_000;
const MAX_ENTRIES = 50_000;

/**
 * Resolves `Authorization: Bearer <key>` to a developer without a database round trip on the hot path.
 *
 * Keys are cached in-process by hash. Revocation must take effect at once in every process, so revoking
 * publishes the hash on a Redis channel and every process evicts it; a generation counter keeps a lookup that
 * raced with an eviction from re-caching the stale row. The TTL is only a backstop for a lost message.
 * `lastUsedAt` is batched: used key ids are collected and written every few seconds, not once per request.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /** Raw key → its SHA-256 hex: a key's hash never changes, and hashing was a few per cent of a cheap request. */
  private readonly hashes = new Map<string, string>();
  private generation = 0;
  private readonly used = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private readonly channel: string;

  constructor(
    private readonly db: Db,
    private readonly pub: Redis,
    private readonly sub: Redis,
    prefix: string,
    private readonly log: Logger,
  ) {
    this.channel = `${prefix}:auth:invalidate`;
    this.timer = setInterval(() => void this.flushTouches(), TOUCH_FLUSH_MS);
    this.timer.unref();
  }

  async start(): Promise<void> {
    this.sub.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.evictLocal(message);
    });
    await this.sub.subscribe(this.channel);
  }

  async authenticate(header: string | undefined): Promise<AuthContext> {
    if (!header) throw new ApiError('missing_api_key');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new ApiError('malformed_api_key', { prefix: API_KEY_PREFIX });
    const raw = match[1]!;
    if (!isWellFormedApiKey(raw)) throw new ApiError('malformed_api_key', { prefix: API_KEY_PREFIX });

    let hex = this.hashes.get(raw);
    if (hex === undefined) {
      if (this.hashes.size >= MAX_ENTRIES) this.hashes.clear();
      hex = hashApiKey(raw).toString('hex');
      this.hashes.set(raw, hex);
    }
    const row = await this.lookup(hex);
    if (!row) throw new ApiError('invalid_api_key');
    if (row.revoked_at) throw new ApiError(row.revoked_reason === 'rotated' ? 'rotated_api_key' : 'revoked_api_key');
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) {
      throw new ApiError('expired_api_key', { expiresAt: row.expires_at.toISOString() });
    }
    this.used.add(row.id);
    return { developerId: row.developer_id, keyId: row.id, tier: row.tier };
  }

  private async lookup(hex: string): Promise<KeyAuthRow | null> {
    const hit = this.cache.get(hex);
    const now = Date.now();
    if (hit && now - hit.at < (hit.row ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS)) return hit.row;
    const gen = this.generation;
    const row = await findKeyByHash(this.db, Buffer.from(hex, 'hex'));
    if (gen === this.generation) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
      this.cache.set(hex, { row, at: now });
    }
    return row;
  }

  /** Evicts a key everywhere: this process at once, other processes through Redis pub/sub. */
  async invalidateKey(hash: Buffer): Promise<void> {
    const msg = `key:${hash.toString('hex')}`;
    this.evictLocal(msg);
    await this.pub.publish(this.channel, msg);
  }

  /** A developer's tier or status changed: drop every cached key of theirs. */
  async invalidateDeveloper(developerId: string): Promise<void> {
    const msg = `dev:${developerId}`;
    this.evictLocal(msg);
    await this.pub.publish(this.channel, msg);
  }

  private evictLocal(message: string): void {
    this.generation++;
    if (message.startsWith('key:')) {
      this.cache.delete(message.slice(4));
    } else if (message.startsWith('dev:')) {
      const dev = message.slice(4);
      for (const [k, v] of this.cache) if (v.row?.developer_id === dev) this.cache.delete(k);
    } else {
      this.cache.clear();
    }
  }

  async flushTouches(): Promise<void> {
    if (this.used.size === 0) return;
    const ids = [...this.used];
    this.used.clear();
    await touchKeys(this.db, ids).catch((e: Error) => this.log.warn({ err: e.message }, 'lastUsedAt flush failed'));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushTouches();
    await this.sub.unsubscribe(this.channel).catch(() => {});
  }
}
