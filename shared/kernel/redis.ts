import { Redis } from 'ioredis';

export type { Redis } from 'ioredis';

/**
 * BullMQ requires maxRetriesPerRequest: null on connections it blocks on (commands wait through a reconnect).
 * Request-path connections use `failFast`: a command fails at once while Redis is down, so the API answers 503
 * instead of hanging.
 */
export function createRedis(url: string, name = 'main', opts: { failFast?: boolean } = {}): Redis {
  const redis = new Redis(url, {
    connectionName: `vap-${name}`,
    enableReadyCheck: true,
    // Request-path commands (rate limits, caches) come in bursts of one per request: auto-pipelining sends the
    // commands of one event-loop tick in one write, which is most of the limiter's cost under load.
    ...(opts.failFast
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true }
      : { maxRetriesPerRequest: null }),
  });
  // Reconnects are automatic; an 'error' listener keeps a transient failure from crashing the process.
  redis.on('error', () => {});
  return redis;
}
