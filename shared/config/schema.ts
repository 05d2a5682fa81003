import { z } from 'zod';
import { agentsEnv } from './areas/agents.ts';
import { billingEnv } from './areas/billing.ts';
import { collectionsEnv } from './areas/collections.ts';
import { providersEnv } from './areas/providers.ts';
import { realtimeEnv } from './areas/realtime.ts';
import { speechEnv } from './areas/speech.ts';
import { videoEnv } from './areas/video.ts';
import { envBool, envInt } from './env.ts';

/**
 * Every environment variable the platform reads, with its default. The README's configuration table and the
 * Kubernetes ConfigMap are checked against this object by tests, so adding a variable here is the one place to
 * start. Each role reads the same schema (one process may run several roles); each area adds its variables in
 * areas/<area>.ts.
 */
export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HOST: z.string().default('0.0.0.0'),
  PORT: envInt(0, 65535).default(8080),
  PUBLIC_BASE_URL: z.url().default('http://localhost:8080'),

  DATABASE_URL: z.string().default('postgres://vap:vap@127.0.0.1:5432/vap'),
  DATABASE_POOL_MAX: envInt(1, 200).default(10),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** Namespaces every Redis key and BullMQ queue, so several installs (or test runs) can share one Redis. */
  REDIS_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9_-]+$/)
    .default('vap'),

  S3_ENDPOINT: z.url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().default('vap-media'),
  S3_ACCESS_KEY_ID: z.string().default('S3RVER'),
  S3_SECRET_ACCESS_KEY: z.string().default('S3RVER'),
  S3_FORCE_PATH_STYLE: envBool.default(true),
  /** Embedded S3 server (s3rver) used when S3_ENDPOINT is unset. */
  S3_EMBEDDED_DIR: z.string().default('.data/s3'),
  S3_EMBEDDED_PORT: envInt(0, 65535).default(9900),

  /** Per-tier request limits per API key per window, e.g. "starter:120,pro:600,scale:3000". */
  RATE_LIMITS: z
    .string()
    .regex(/^(\w+:\d+)(,\w+:\d+)*$/)
    .default('starter:120,pro:600,scale:3000'),
  RATE_LIMIT_WINDOW_SECONDS: envInt(1, 3600).default(60),

  /** Comma-separated hosts or CIDRs that outbound fetches of user URLs may reach despite being private. */
  OUTBOUND_ALLOWLIST: z.string().default(''),
  OUTBOUND_MAX_BYTES: envInt(1, 2_000_000_000).default(200 * 1024 * 1024),
  OUTBOUND_TIMEOUT_MS: envInt(100, 600_000).default(30_000),

  /** How long SIGTERM waits for in-flight requests and jobs before closing anyway. */
  SHUTDOWN_GRACE_MS: envInt(0, 600_000).default(25_000),
  /** Concurrency of the CPU worker pool per process. */
  WORKER_CPU_CONCURRENCY: envInt(1, 256).default(2),
  /** GPU device index this GPU worker process owns (one process per GPU). */
  GPU_DEVICE: envInt(0, 64).default(0),
  /** Comma-separated GPU pools this process serves (avatar, lipsync, analysis, generate). Empty = all. */
  GPU_POOLS: z.string().default(''),

  ...providersEnv,
  ...billingEnv,
  ...speechEnv,
  ...collectionsEnv,
  ...agentsEnv,
  ...realtimeEnv,
  ...videoEnv,
});
export type Env = z.infer<typeof EnvSchema>;
