import type { FastifyInstance } from 'fastify';
import type { Config } from '../shared/kernel/config/index.ts';
import type { Logger } from '../shared/kernel/observability/logger.ts';
import { engineSummary } from '../shared/engines/engines.ts';
import { trackQueueBacklogAge } from '../shared/kernel/observability/metrics.ts';
import type { RunningWorker } from '../shared/kernel/queue/worker-runner.ts';
import { assertSessionSecret, sessionSecret } from '../shared/domains/realtime/secret.ts';
import { buildHttpServer } from '../shared/composition/http/server.ts';
import { createInfra, type Infra } from '../shared/platform/infra.ts';

/**
 * `tests` is the CPU pool's test pool alone (queue `cpu-tests`: agent test runs and call replays, which run users'
 * scenarios and a private api + realtime pair). The `cpu` role consumes that queue too unless the process is told
 * the test pool runs elsewhere (`testPoolElsewhere`: scripts/start.ts runs it in a child process of its own where the
 * cpu role shares its process with live calls).
 */
export const ROLES = ['api', 'cpu', 'gpu', 'realtime', 'tests'] as const;
export type Role = (typeof ROLES)[number];

export interface PlatformOptions {
  /** Another process consumes queue `cpu-tests` (the `tests` role), so the `cpu` role here leaves it alone. */
  testPoolElsewhere?: boolean;
}

export interface Platform {
  infra: Infra;
  app: FastifyInstance;
  url: string;
  roles: Role[];
  /** Graceful drain: stop accepting, finish (or hand back) in-flight work within the grace period, close. */
  stop(): Promise<void>;
}

/**
 * Starts the given roles in this process. Every role gets an HTTP server for /healthz, /readyz and /metrics; the
 * api and realtime roles add their routes to it. Roles communicate only through Postgres, Redis and S3, and no
 * role imports another (eslint.config.js enforces it); this file is the one place that loads them.
 */
export async function startPlatform(
  config: Config,
  log: Logger,
  roles: Role[],
  opts: PlatformOptions = {},
): Promise<Platform> {
  // Config that can only be judged knowing the roles fails here, before any connection is opened.
  assertSessionSecret(config, roles);
  // Every role's engine registries are built with Infra (and their configuration checked) before it opens a
  // connection, so a bad vendor configuration stops the process at boot with a message naming it, not a call later.
  const infra = await createInfra(config, log);
  log.info({ engines: engineSummary(infra.engines) }, 'engines ready');
  // Calls still work without the streaming recogniser's worker, slower: the operator should know why.
  const liveSttFallback = infra.engines.liveSttFallback;
  if (liveSttFallback) log.warn({ reason: liveSttFallback }, 'local live STT: batch fallback');
  // Where developers' non-live syntheses run (SPEECH_LOCAL_BATCH_CPUS): pinned, or why not.
  const batchCpus = infra.engines.batchCpus;
  log.info({ cpus: batchCpus.pinning?.list ?? null, reason: batchCpus.reason }, 'local TTS batch workers: cpus');
  // The one-process mode may run on an invented secret; make (and log) it at boot, not on the first call.
  if (roles.includes('api') || roles.includes('realtime')) sessionSecret(infra);
  const state = { draining: false };
  // Every role gets the role-neutral server; api and realtime add their routes to it. Roles are loaded only when
  // this process runs them, so a GPU pod never loads Fastify's route plugins or the api's services.
  const app = await buildHttpServer(infra, { auth: roles.includes('api') || roles.includes('realtime'), state });
  if (roles.includes('realtime')) await (await import('../workers/realtime/server.ts')).registerRealtimeRole(app);
  if (roles.includes('api')) await (await import('../api/server.ts')).registerApiRole(app);
  const workers: RunningWorker[] = [];
  const testPool = roles.includes('tests') || (roles.includes('cpu') && !opts.testPoolElsewhere);
  if (roles.includes('cpu') || testPool) {
    // Agent test runs and call replays play their calls on a private api + realtime pair: started here, where roles load.
    const privatePlatform = (c: Config, l: Logger) => startPlatform(c, l, ['api', 'realtime']);
    const queues = { cpu: roles.includes('cpu'), tests: testPool };
    workers.push(...(await import('../workers/cpu/role.ts')).startCpuWorkers(infra, privatePlatform, queues));
  }
  if (roles.includes('gpu')) workers.push(...(await import('../workers/gpu/role.ts')).startGpuWorkers(infra));
  // Every worker process reconciles Postgres with the queues on its own timer (nothing to install in Redis).
  const reconciler = workers.length
    ? (await import('../shared/composition/reconciler.ts')).startReconciler(infra)
    : null;
  // Every role reports the age of the oldest waiting job per queue (the backlog-age alert reads it).
  const untrackBacklog = trackQueueBacklogAge(() => infra.queues.all());
  await app.listen({ host: config.HOST, port: config.PORT });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  const url = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;

  let stopping: Promise<void> | null = null;
  return {
    infra,
    app,
    url,
    roles,
    stop() {
      stopping ??= (async () => {
        state.draining = true;
        untrackBacklog();
        const grace = config.SHUTDOWN_GRACE_MS;
        // app.close() stops accepting and waits for in-flight requests; workers finish or hand back jobs.
        await reconciler?.stop();
        await Promise.all([app.close(), ...workers.map((w) => w.drain(grace))]);
        await infra.close();
      })();
      return stopping;
    },
  };
}
