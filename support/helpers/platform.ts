import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { loadConfig, type Config } from '../../shared/kernel/config/index.ts';
import { insertDeveloper, type Tier } from '../../shared/kernel/db/developers.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { startPlatform, type Platform, type Role } from '../../scripts/platform.ts';
import { createTestDatabase } from './db.ts';
import { SHARED_LM_DIR } from './shared-lm-dir.ts';

export interface TestPlatform extends Platform {
  config: Config;
  /** Creates a developer with a key; returns the raw key for Authorization headers. */
  developer(tier?: Tier): Promise<{ developerId: string; apiKey: string; keyId: string }>;
  /** fetch against the platform with a key. */
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The real platform in this process on port 0: its own database (cloned from the migrated template), its own
 * Redis prefix and its own embedded S3 folder, so test files never see each other's data.
 */
export async function startTestPlatform(
  opts: {
    roles?: Role[];
    env?: Record<string, string>;
    /** Record every log line (at trace level) here, e.g. to assert that no secret is ever logged. */
    logLines?: string[];
  } = {},
): Promise<TestPlatform> {
  const db = await createTestDatabase();
  const s3dir = await mkdtemp(join(tmpdir(), 'vap-s3-'));
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    DATABASE_POOL_MAX: '5',
    REDIS_PREFIX: `t${randomBytes(5).toString('hex')}`,
    S3_EMBEDDED_DIR: s3dir,
    S3_EMBEDDED_PORT: '0',
    SHUTDOWN_GRACE_MS: '5000',
    // Most tests start the api alone, which (like a deployment) needs the secret it shares with realtime.
    REALTIME_SESSION_SECRET: randomBytes(32).toString('base64url'),
    // The tests play the proxy in front (each portal browser sends its own X-Forwarded-For from loopback); the
    // platform's default trusts none (test/foundation/trusted-proxies.test.ts).
    TRUST_PROXY: 'loopback',
    // Per-agent language models take seconds of CPU and ~0.6 GB each: tests that save agents or make calls do not
    // build them unless they ask (test/speech/language-model.test.ts and its neighbours build theirs directly).
    SPEECH_LM_AUTO_BUILD: 'false',
    // A test that builds one prunes the general model once for the whole suite, not once per test folder.
    SPEECH_LM_BACKGROUND_DIR: SHARED_LM_DIR,
    ...opts.env,
  });
  // Recorded lines go through the production logger, redaction included: a test that no secret is logged must
  // see what an operator's log would.
  const log = opts.logLines
    ? createLogger(
        'trace',
        { test: true },
        new Writable({ write: (chunk: Buffer, _enc, cb) => (opts.logLines!.push(chunk.toString('utf8')), cb()) }),
      )
    : createLogger(config.LOG_LEVEL, { test: true });
  const platform = await startPlatform(config, log, opts.roles ?? ['api', 'cpu', 'gpu', 'realtime']);
  let closed = false;
  return {
    ...platform,
    config,
    async developer(tier: Tier = 'starter') {
      const dev = await insertDeveloper(platform.infra.db, `dev-${randomBytes(3).toString('hex')}`, tier);
      const key = await mintKey(platform.infra.db, dev.id, 'Default');
      return { developerId: dev.id, apiKey: key.key, keyId: key.id };
    },
    request(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.key) headers.set('authorization', `Bearer ${init.key}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('content-type', 'application/json');
        body = JSON.stringify(init.json);
      }
      return fetch(platform.url + path, { ...init, headers, body });
    },
    async close() {
      if (closed) return;
      closed = true;
      const redis = platform.infra.bullRedis;
      const keys = await redis.keys(`${config.REDIS_PREFIX}:*`).catch(() => [] as string[]);
      if (keys.length) await redis.del(...keys).catch(() => {});
      await platform.stop();
      await db.drop();
      await rm(s3dir, { recursive: true, force: true });
    },
  };
}

/** Polls until the predicate holds (never a fixed sleep). */
export async function waitUntil<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 20_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
