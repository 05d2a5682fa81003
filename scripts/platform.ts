import type { FastifyInstance } from 'fastify';
import { buildHttpApp } from '../api/http-app.ts';
import type { Config } from '../shared/config/index.ts';
import type { Logger } from '../shared/observability/logger.ts';
import { trackQueueBacklogAge } from '../shared/observability/metrics.ts';
import type { RunningWorker } from '../shared/queue/worker-runner.ts';
import { assertSessionSecret, sessionSecret } from '../shared/realtime/secret.ts';
import { createInfra, type Infra } from '../shared/runtime/infra.ts';
import { startCpuWorkers } from '../workers/cpu/role.ts';
import { startGpuWorkers } from '../workers/gpu/role.ts';

export const ROLES = ['api', 'cpu', 'gpu', 'realtime'] as const;
export type Role = (typeof ROLES)[number];

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
 * api and realtime roles add their routes to it. Roles communicate only through Postgres, Redis and S3.
 */
export async function startPlatform(config: Config, log: Logger, roles: Role[]): Promise<Platform> {
  // Config that can only be judged knowing the roles fails here, before any connection is opened.
  assertSessionSecret(config, roles);
  const infra = await createInfra(config, log);
  // The one-process mode may run on an invented secret; make (and log) it at boot, not on the first call.
  if (roles.includes('api') || roles.includes('realtime')) sessionSecret(infra);
  const state = { draining: false };
  const app = await buildHttpApp(infra, { api: roles.includes('api'), realtime: roles.includes('realtime'), state });
  const workers: RunningWorker[] = [];
  if (roles.includes('cpu')) workers.push(...startCpuWorkers(infra));
  if (roles.includes('gpu')) workers.push(...startGpuWorkers(infra));
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
        await Promise.all([app.close(), ...workers.map((w) => w.drain(grace))]);
        await infra.close();
      })();
      return stopping;
    },
  };
}
