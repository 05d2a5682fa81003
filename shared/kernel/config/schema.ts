import { z } from 'zod';
import { agentsEnv } from './areas/agents.ts';
import { billingEnv } from './areas/billing.ts';
import { collectionsEnv } from './areas/collections.ts';
import { portalEnv } from './areas/portal.ts';
import { providersEnv } from './areas/providers.ts';
import { realtimeEnv } from './areas/realtime.ts';
import { admissionEnv } from './areas/admission.ts';
import { campaignsEnv } from './areas/campaigns.ts';
import { speechEnv } from './areas/speech.ts';
import { toolsEnv } from './areas/tools.ts';
import { videoEnv } from './areas/video.ts';
import { envBool, envInt } from './env.ts';
import { validTrustProxy } from './trust-proxy.ts';

/**
 * Every environment variable the platform reads, with its default. The README's configuration table and the
 * Kubernetes ConfigMap are checked against this object by tests, so adding a variable here is the one place to
 * start. Each role reads the same schema (one process may run several roles); each area adds its variables in
 * areas/<area>.ts.
 */
export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development').describe('Runtime mode.'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('pino log level.'),
  HOST: z.string().default('0.0.0.0').describe('Interface the HTTP server of every role binds.'),
  PORT: envInt(0, 65535)
    .default(8080)
    .describe('HTTP port of the role (API, realtime sockets, or the health/metrics server of a worker).'),
  PUBLIC_BASE_URL: z
    .url()
    .default('http://localhost:8080')
    .describe('Base URL clients reach the platform at; used for Twilio stream URLs and links in responses.'),

  DATABASE_URL: z
    .string()
    .default('postgres://vap:vap@127.0.0.1:5432/vap')
    .describe('Postgres connection string (the server needs the pgvector extension).'),
  DATABASE_POOL_MAX: envInt(1, 200).default(10).describe('Connections per process.'),
  REDIS_URL: z
    .string()
    .default('redis://127.0.0.1:6379')
    .describe('Redis for queues, rate limits and cross-process cache invalidation (maxmemory-policy noeviction).'),
  /** Namespaces every Redis key and BullMQ queue, so several installs (or test runs) can share one Redis. */
  REDIS_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9_-]+$/)
    .default('vap')
    .describe('Namespace of every Redis key and queue, so several installs can share one Redis.'),

  S3_ENDPOINT: z
    .url()
    .optional()
    .describe('S3 endpoint. Unset: an embedded S3-compatible server (s3rver) starts on loopback.'),
  S3_REGION: z.string().default('us-east-1').describe('S3 region.'),
  S3_BUCKET: z
    .string()
    .default('vap-media')
    .describe('Bucket for every media artifact (created at start when missing).'),
  S3_ACCESS_KEY_ID: z.string().default('S3RVER').describe('S3 access key id.'),
  S3_SECRET_ACCESS_KEY: z.string().default('S3RVER').describe('S3 secret access key.'),
  S3_FORCE_PATH_STYLE: envBool.default(true).describe('Path-style bucket addressing (MinIO, s3rver).'),
  /** Embedded S3 server (s3rver) used when S3_ENDPOINT is unset. */
  S3_EMBEDDED_DIR: z.string().default('.data/s3').describe('Data folder of the embedded S3 server.'),
  S3_EMBEDDED_PORT: envInt(0, 65535)
    .default(9900)
    .describe(
      'Port of the embedded S3 server. Roles started apart on one machine share it: the first binds it, the others ' +
        'use it and take it over if its owner stops.',
    ),

  /** Per-tier request limits per API key per window, e.g. "starter:120,pro:600,scale:3000". */
  RATE_LIMITS: z
    .string()
    .regex(/^(\w+:\d+)(,\w+:\d+)*$/)
    .default('starter:120,pro:600,scale:3000')
    .describe('Requests per API key per window, by tier (tier:count,…).'),
  RATE_LIMIT_WINDOW_SECONDS: envInt(1, 3600).default(60).describe('Length of the rate-limit window.'),

  /** Comma-separated hosts or CIDRs that outbound fetches of user URLs may reach despite being private. */
  OUTBOUND_ALLOWLIST: z
    .string()
    .default('')
    .describe(
      'Hosts, IPs or CIDRs that fetches of user URLs may reach even though they are private (local development).',
    ),
  OUTBOUND_MAX_BYTES: envInt(1, 2_000_000_000)
    .default(200 * 1024 * 1024)
    .describe('Largest body fetched from a user URL.'),
  OUTBOUND_TIMEOUT_MS: envInt(100, 600_000).default(30_000).describe('Time limit for fetching a user URL.'),

  /** Which peers may set X-Forwarded-For/-Proto/-Host: Fastify's trustProxy (shared/composition/http/trust-proxy.ts). */
  TRUST_PROXY: z
    .string()
    .default('')
    .refine(validTrustProxy, 'a hop count (e.g. 1), or comma-separated IPs/CIDRs (or loopback, linklocal, uniquelocal)')
    .describe(
      'Proxies whose X-Forwarded-* headers are believed: a hop count (1 = the one ingress in front), or IPs/CIDRs ' +
        '(loopback, linklocal, uniquelocal allowed). Empty: none, the socket address is the client (per-IP limits).',
    ),
  /** How long SIGTERM waits for in-flight requests and jobs before closing anyway. */
  PROCESSES: envInt(1, 64)
    .default(1)
    .describe(
      'Processes this start command runs (node:cluster, sharing PORT). Each holds its own share of requests, calls and jobs; on one machine set it to the number of cores. In Kubernetes keep 1 and scale pods.',
    ),
  SHUTDOWN_GRACE_MS: envInt(0, 600_000)
    .default(25_000)
    .describe(
      'On SIGTERM, how long in-flight requests and jobs may finish before they are aborted (jobs go back to the queue).',
    ),
  /** Concurrency of the CPU worker pool per process. */
  WORKER_CPU_CONCURRENCY: envInt(1, 256).default(2).describe('Concurrent jobs per CPU worker process.'),
  /** Concurrency of the CPU pool's second queue, `cpu-tests` (agent test runs and call replays), per process. */
  WORKER_TESTS_CONCURRENCY: envInt(1, 64)
    .default(2)
    .describe(
      'Agent test runs and call replays one CPU worker process plays at once (queue cpu-tests, its own worker, ' +
        'beside the WORKER_CPU_CONCURRENCY jobs of queue cpu). Each run opens AGENT_TESTS_MAX_PARALLEL calls.',
    ),
  /** GPU device index this GPU worker process owns (one process per GPU). */
  GPU_DEVICE: envInt(0, 64).default(0).describe('GPU index this GPU worker process owns (one process per GPU).'),
  /** Comma-separated GPU pools this process serves (avatar, lipsync, analysis, generate). Empty = all. */
  GPU_POOLS: z
    .string()
    .default('')
    .describe('Comma-separated GPU pools this process serves (avatar, lipsync, analysis, generate); empty = all.'),
  /** The job reconciler every worker runs on a plain timer (shared/composition/reconciler.ts). */
  RECONCILE_INTERVAL_MS: envInt(100, 3_600_000)
    .default(15_000)
    .describe(
      'How often each worker process reconciles Postgres with the queues: re-enqueues accepted jobs whose queue entry was lost, settles left credit holds',
    ),
  RECONCILE_AFTER_MS: envInt(0, 3_600_000)
    .default(15_000)
    .describe('How long an open job goes without its queue entry before the reconciler puts it back'),
  HOLD_SWEEP_AFTER_MS: envInt(60_000, 7 * 24 * 3_600_000)
    .default(3_600_000)
    .describe(
      "Age after which a request's credit hold still reserved is refunded by the reconciler (a job's hold follows its job)",
    ),
  WORKER_STALLED_INTERVAL_MS: envInt(1000, 600_000)
    .default(30_000)
    .describe(
      'Lock and stalled-check period of queue workers: a job whose worker died is handed to another worker within about twice this',
    ),

  ...providersEnv,
  ...billingEnv,
  ...speechEnv,
  ...collectionsEnv,
  ...agentsEnv,
  ...realtimeEnv,
  ...admissionEnv,
  ...campaignsEnv,
  ...videoEnv,
  ...toolsEnv,
  ...portalEnv,
});
export type Env = z.infer<typeof EnvSchema>;
