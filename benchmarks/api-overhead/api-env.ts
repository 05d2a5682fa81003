import { randomBytes } from 'node:crypto';

/**
 * The environment the api-overhead benchmarks start the api role with (run.ts times it, boot-footprint.ts counts
 * what it holds), kept in one place so that both measure the same process.
 */
export function apiRoleEnv(opts: { dbUrl: string; s3dir: string; port: string }): Record<string, string> {
  return {
    PORT: opts.port,
    HOST: '127.0.0.1',
    DATABASE_URL: opts.dbUrl,
    REDIS_PREFIX: `bench${randomBytes(3).toString('hex')}`,
    S3_EMBEDDED_DIR: opts.s3dir,
    S3_EMBEDDED_PORT: '0',
    LOG_LEVEL: 'warn',
    // Measured as deployed: production mode, which refuses the published development secrets.
    NODE_ENV: 'production',
    PROVIDER_KEYS_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    REALTIME_SESSION_SECRET: randomBytes(32).toString('hex'),
    // The limiter still runs on every request; the limit is set high so the benchmark measures its cost.
    RATE_LIMITS: 'starter:100000000,pro:100000000,scale:100000000',
  };
}
