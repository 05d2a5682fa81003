import { Authenticator } from './auth/authenticator.ts';
import { RateLimiter } from './auth/rate-limiter.ts';
import { createMeter, type CreditMeter } from './metering/meter.ts';
import { createStoredKeyLookup } from './keys/stored-keys.ts';
import type { Config } from '../kernel/config/index.ts';
import { migrate } from '../kernel/db/migrate.ts';
import { createDb, type Db } from '../kernel/db/pool.ts';
import type { StoredKeyLookup } from './keys/provider-key.ts';
import { AddressPolicy } from '../kernel/net/address-policy.ts';
import type { Logger } from '../kernel/observability/logger.ts';
import { startSpawner } from '../kernel/process/spawner.ts';
import { configureTools } from '../kernel/process/tools.ts';
import { buildEngines, type Engines } from '../engines/engines.ts';
import { Queues } from '../kernel/queue/queues.ts';
import { createRedis, type Redis } from '../kernel/redis.ts';
import { startEmbeddedS3, type EmbeddedS3 } from '../kernel/storage/embedded-s3.ts';
import { Storage } from '../kernel/storage/s3.ts';

/**
 * The connections a process holds: Postgres, Redis, S3 and the queue producers. Every role builds one; in the
 * one-process mode the roles share it, which changes nothing since roles only talk through these.
 */
export interface Infra {
  config: Config;
  log: Logger;
  db: Db;
  /** Request-path Redis: fails fast while Redis is down so the API can answer 503. */
  redis: Redis;
  /** Blocking Redis for BullMQ producers/workers: waits through reconnects. */
  bullRedis: Redis;
  storage: Storage;
  queues: Queues;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  addressPolicy: AddressPolicy;
  /** Credits: reserve → commit/refund for every metered operation; usage snapshots for the X-Usage-* headers. */
  meter: CreditMeter;
  /** The developer's stored provider keys, decrypted on demand (resolveProviderKey's second step). */
  storedKeys: StoredKeyLookup;
  embeddedS3: EmbeddedS3 | null;
  /** The engine registries (TTS, STT, VAD, LLM, embeddings), built from config before any connection opens. */
  engines: Engines;
  checkReady(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

export async function createInfra(config: Config, log: Logger, opts: { migrate?: boolean } = {}): Promise<Infra> {
  configureTools(config);
  // Tools are forked by a small spawner process, never on this event loop; it is forked from here once, now, while
  // this process is still small (a fork's stall grows with the forking process's memory).
  startSpawner();
  // A bad vendor configuration stops the process here, naming it, before a connection is opened.
  const engines = buildEngines(config);
  const db = createDb(config.DATABASE_URL, config.DATABASE_POOL_MAX);
  if (opts.migrate !== false) {
    const applied = await migrate(db);
    if (applied.length) log.info({ applied }, 'migrations applied');
  }

  const redis = createRedis(config.REDIS_URL, 'api', { failFast: true });
  const bullRedis = createRedis(config.REDIS_URL, 'bull');
  const sub = createRedis(config.REDIS_URL, 'sub');

  let embeddedS3: EmbeddedS3 | null = null;
  let endpoint = config.S3_ENDPOINT;
  if (!endpoint) {
    embeddedS3 = await startEmbeddedS3(config.S3_EMBEDDED_DIR, config.S3_EMBEDDED_PORT);
    endpoint = embeddedS3.endpoint;
    log.info({ endpoint, dir: config.S3_EMBEDDED_DIR, owned: embeddedS3.owned }, 'embedded S3 server');
  }
  const storage = new Storage({
    endpoint,
    region: config.S3_REGION,
    bucket: config.S3_BUCKET,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
  });
  await storage.ensureBucket();

  const authenticator = new Authenticator(db, redis, sub, config.REDIS_PREFIX, log.child({ component: 'auth' }));
  await authenticator.start();

  const infra: Infra = {
    config,
    log,
    db,
    redis,
    bullRedis,
    storage,
    queues: new Queues(bullRedis, config.REDIS_PREFIX),
    authenticator,
    rateLimiter: new RateLimiter(redis, config.REDIS_PREFIX, config.RATE_LIMIT_WINDOW_SECONDS),
    addressPolicy: new AddressPolicy(config.outboundAllowlist),
    meter: createMeter({ db, redis, config, log }),
    storedKeys: createStoredKeyLookup({ db, config }),
    embeddedS3,
    engines,
    async checkReady() {
      const checks: Record<string, string> = {};
      await Promise.all([
        db.query('select 1').then(
          () => (checks.postgres = 'ok'),
          (e: Error) => (checks.postgres = e.message),
        ),
        redis.ping().then(
          () => (checks.redis = 'ok'),
          (e: Error) => (checks.redis = e.message),
        ),
        storage.ping().then(
          () => (checks.s3 = 'ok'),
          (e: Error) => (checks.s3 = e.message || e.name),
        ),
      ]);
      return checks;
    },
    async close() {
      await authenticator.close();
      await infra.queues.close();
      storage.close();
      await embeddedS3?.close();
      sub.disconnect();
      redis.disconnect();
      bullRedis.disconnect();
      await db.end();
    },
  };
  return infra;
}
